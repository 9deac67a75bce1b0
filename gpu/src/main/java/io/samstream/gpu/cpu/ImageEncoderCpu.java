package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.model.SamConfig;

/**
 * SAM's image encoder ({@code ImageEncoderViT}) in fp32: patch embedding (a PxP stride-P convolution as a
 * GEMM) plus the absolute position embedding, the ViT blocks, and the neck (1x1 conv, LayerNorm2d, 3x3
 * conv, LayerNorm2d, no conv biases). Tokens are kept channels-last [E*E, dim] throughout, as the
 * reference's [B, H, W, C] layout; only the result is turned into channels-first [C, E, E].
 */
final class ImageEncoderCpu {
    private final SamConfig config;
    private final Linear patchEmbed;
    private final float[] posEmbed;
    private final EncoderBlock[] blocks;
    private final Conv2d neckConv1;
    private final LayerNorm neckNorm1;
    private final Conv2d neckConv2;
    private final LayerNorm neckNorm2;

    ImageEncoderCpu(StateDict sd, SamConfig c) {
        this.config = c;
        int d = c.encoderDim();
        int e = c.embeddingSize();
        int p = c.patchSize();
        int out = c.promptDim();
        String enc = "image_encoder.";
        float[] pw = sd.get(enc + "patch_embed.proj.weight", d, 3, p, p).data();
        float[] pb = sd.get(enc + "patch_embed.proj.bias", d).data();
        this.patchEmbed = new Linear(PackedMatrix.fromOutIn(pw, d, 3 * p * p), pb.clone());
        this.posEmbed = sd.get(enc + "pos_embed", 1, e, e, d).data().clone();
        this.blocks = new EncoderBlock[c.encoderDepth()];
        for (int i = 0; i < blocks.length; i++) {
            WindowGrid grid = c.isGlobalAttention(i) ? WindowGrid.global(e, e)
                    : WindowGrid.windowed(e, e, c.windowSize());
            blocks[i] = EncoderBlock.load(sd, enc + "blocks." + i + ".", d, c.encoderHeads(), c.encoderMlpDim(),
                    grid);
        }
        this.neckConv1 = Conv2d.load(sd, enc + "neck.0", d, out, 1, 1, 0, false);
        this.neckNorm1 = LayerNorm.load(sd, enc + "neck.1", out, LayerNorm.LAYER_NORM_2D_EPS);
        this.neckConv2 = Conv2d.load(sd, enc + "neck.2", out, out, 3, 1, 1, false);
        this.neckNorm2 = LayerNorm.load(sd, enc + "neck.3", out, LayerNorm.LAYER_NORM_2D_EPS);
    }

    /**
     * Encodes one normalized, padded image.
     *
     * @param image  channels-first [3, S, S] at {@code offset} in {@code image}
     * @param output receives channels-first [C, E, E] at {@code outOffset}
     */
    void encode(CpuThreadPool pool, float[] image, int offset, float[] output, int outOffset) {
        int e = config.embeddingSize();
        int tokens = e * e;
        int d = config.encoderDim();
        float[] x = patchEmbed.forward(pool,
                patches(image, offset, config.imageSize(), config.patchSize(), e), tokens);
        CpuOps.addInPlace(pool, x, posEmbed, tokens * d);
        float[] scratch = new float[tokens * d];
        for (EncoderBlock block : blocks) {
            block.forward(pool, x, tokens, scratch);
        }
        float[] y = neckConv1.forward(pool, x, e, e);
        neckNorm1.apply(pool, y, tokens, y);
        y = neckConv2.forward(pool, y, e, e);
        neckNorm2.apply(pool, y, tokens, y);
        int c = config.promptDim();
        for (int t = 0; t < tokens; t++) {
            for (int ch = 0; ch < c; ch++) {
                output[outOffset + ch * tokens + t] = y[t * c + ch];
            }
        }
    }

    /** The image's PxP patches as rows [E*E, 3*P*P], columns ordered (channel, dy, dx) like the conv weight. */
    static float[] patches(float[] image, int offset, int s, int p, int e) {
        int rowLen = 3 * p * p;
        float[] cols = new float[e * e * rowLen];
        for (int py = 0; py < e; py++) {
            for (int px = 0; px < e; px++) {
                int row = (py * e + px) * rowLen;
                for (int ch = 0; ch < 3; ch++) {
                    for (int dy = 0; dy < p; dy++) {
                        int src = offset + (ch * s + py * p + dy) * s + px * p;
                        System.arraycopy(image, src, cols, row + (ch * p + dy) * p, p);
                    }
                }
            }
        }
        return cols;
    }
}
