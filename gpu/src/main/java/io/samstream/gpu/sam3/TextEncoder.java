package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Linear;

/**
 * SAM 3's text encoder ({@code VETextEncoder}): token embedding plus position embedding, pre-LN residual blocks
 * with causal self-attention and a GELU MLP ({@code ln_1}, attention, {@code ln_2}, {@code c_fc}, GELU,
 * {@code c_proj}), {@code ln_final}, and the resizer to the detector's width. Every position is kept (no pooling);
 * padding positions (id 0) are marked for the detector to ignore.
 */
final class TextEncoder {
    static final String PREFIX = "backbone.language_backbone.";

    private final float[] tokenEmbedding;
    private final float[] positionEmbedding;
    private final Block[] blocks;
    private final LayerNorm lnFinal;
    private final Linear resizer;
    private final Sam3Config.Text config;

    private record Block(LayerNorm ln1, Attention attn, LayerNorm ln2, Linear fc, Linear proj) {}

    TextEncoder(StateDict sd, Sam3Config.Text t, int d) {
        this.config = t;
        String e = PREFIX + "encoder.";
        int w = t.width();
        this.tokenEmbedding = sd.get(e + "token_embedding.weight", t.vocabSize(), w).data();
        this.positionEmbedding = sd.get(e + "positional_embedding", t.contextLength(), w).data();
        this.blocks = new Block[t.layers()];
        for (int i = 0; i < blocks.length; i++) {
            String r = e + "transformer.resblocks." + i + ".";
            blocks[i] = new Block(LayerNorm.load(sd, r + "ln_1", w, Sam3Config.NORM_EPS),
                    Attention.load(sd, r + "attn", w, t.heads()),
                    LayerNorm.load(sd, r + "ln_2", w, Sam3Config.NORM_EPS),
                    Linear.load(sd, r + "mlp.c_fc", w, t.mlpHidden()),
                    Linear.load(sd, r + "mlp.c_proj", t.mlpHidden(), w));
        }
        this.lnFinal = LayerNorm.load(sd, e + "ln_final", w, Sam3Config.NORM_EPS);
        this.resizer = Linear.load(sd, PREFIX + "resizer", w, d);
    }

    /** The features of a tokenized phrase (as many ids as the context, e.g. from {@code Sam3Tokenizer.tokenize}). */
    TextFeatures encode(CpuThreadPool pool, int[] tokens) {
        int n = tokens.length;
        int w = config.width();
        if (n != config.contextLength()) {
            throw new IllegalArgumentException(n + " token ids for a text context of " + config.contextLength());
        }
        float[] x = new float[n * w];
        boolean[] padding = new boolean[n];
        for (int i = 0; i < n; i++) {
            int id = tokens[i];
            if (id < 0 || id >= config.vocabSize()) {
                throw new IllegalArgumentException("token id " + id + " at " + i + " is outside the text encoder's "
                        + "vocabulary of " + config.vocabSize() + " (a tokenizer of another vocabulary?)");
            }
            for (int c = 0; c < w; c++) {
                x[i * w + c] = tokenEmbedding[id * w + c] + positionEmbedding[i * w + c];
            }
            padding[i] = id == 0;
        }
        for (Block b : blocks) {
            float[] h = b.ln1().apply(pool, x, n);
            CpuOps.addInPlace(pool, x, b.attn().forward(pool, h, n, h, h, n, null, true, null), n * w);
            float[] m = b.fc().forward(pool, b.ln2().apply(pool, x, n), n);
            CpuOps.gelu(pool, m, m.length);
            CpuOps.addInPlace(pool, x, b.proj().forward(pool, m, n), n * w);
        }
        lnFinal.apply(pool, x, n, x);
        return new TextFeatures(tokens.clone(), resizer.forward(pool, x, n), padding);
    }
}
