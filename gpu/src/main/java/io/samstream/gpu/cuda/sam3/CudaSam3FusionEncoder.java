package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.DeviceWeights.Bf16;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.NormKernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels.Rows;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Prompt;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3Fusion;
import java.util.ArrayList;
import java.util.List;

/**
 * SAM 3's fusion encoder ({@code TransformerEncoderFusion}: pre-LN layers over the image tokens) on the GPU in bf16
 * with fp32 accumulation, read the way the CPU reference ({@code sam3.FusionEncoder}, {@code sam3.EncoderLayer})
 * reads, on existing kernels only. Each layer, on channels-last rows:
 * <ol>
 *   <li>{@code h = norm1(x)}; {@code qk = h + pos} (the sine position on queries and keys, the value without it);
 *       one GEMM of qk by the packed in_proj's query and key rows, one of h by its value rows; SDPA over the tokens;
 *       out_proj with x as the residual;</li>
 *   <li>{@code h = norm2(x)}; the query GEMM, then the prompt's keys and values in one GEMM (no position on the
 *       cross keys in the fusion encoder); SDPA of the tokens over the prompt; out_proj added to x;</li>
 *   <li>{@code x = x + linear2(ReLU(linear1(norm3(x))))}: the GEMMs have no ReLU epilogue (GELU only), so SAM 2's
 *       elementwise ReLU kernel (memory attention) runs between them, one more pass over the hidden rows.</li>
 * </ol>
 * The prompt's key padding: the attention kernel has no mask, and padding is per key, so only the prompt's valid
 * rows are uploaded; attention over the valid keys alone is what the masked softmax computes. The first layer reads
 * the uploaded tokens and leaves its sum in {@code x}, so a pass can be repeated on the same inputs. Weights and the
 * activations of {@code tokens} image tokens and up to {@code maxPrompt} valid prompt tokens come from the pool; a
 * pass allocates nothing. Not thread-safe.
 */
public final class CudaSam3FusionEncoder implements Sam3Fusion {
    private static final float EPS = (float) Sam3Config.NORM_EPS;

    /**
     * One layer: the norms; the self-attention's packed in_proj split into its query + key rows and its value rows,
     * the cross-attention's into its query rows and its key + value rows.
     */
    private record Layer(Bf16 norm1, Bf16 selfQk, Bf16 selfV, Bf16 selfOut, Bf16 norm2, Bf16 crossQ, Bf16 crossKv,
                         Bf16 crossOut, Bf16 norm3, Bf16 linear1, Bf16 linear2) {}

    private final CudaStream stream;
    private final PinnedBuffer staging;
    private final GemmKernels gemm;
    private final NormKernels norm;
    private final Sam2Kernels ops;
    private final int d, heads, hd, ffn, tokens, maxPrompt;
    private final Layer[] layers;
    // activations
    private final DeviceBuffer image, pos, prompt, x, xn, qk, v, attn, kv, wide;
    /** The position array whose values {@code pos} holds (null: none, or an upload that did not finish). */
    private float[] uploadedPos;

    /**
     * Uploads the encoder's weights (bf16, through {@code staging}, synchronously) and allocates the activations of
     * {@code tokens} image tokens and {@code maxPrompt} valid prompt tokens, all from {@code pool}.
     *
     * @param sd the detector's weights under Meta's key names ({@code transformer.encoder.layers.*})
     * @throws IllegalArgumentException when the kernels cannot run these shapes ({@link #checkSupported})
     */
    public CudaSam3FusionEncoder(StateDict sd, Sam3Config.Detector detector, int tokens, int maxPrompt,
                                 CudaKernels kernels, CudaStream stream, DeviceMemoryPool pool, PinnedBuffer staging) {
        checkSupported(detector, tokens, maxPrompt);
        this.stream = stream;
        this.staging = staging;
        this.gemm = GemmKernels.of(kernels);
        this.norm = NormKernels.of(kernels);
        this.ops = Sam2Kernels.of(kernels);
        this.d = detector.dModel();
        this.heads = detector.heads();
        this.hd = d / heads;
        this.ffn = detector.encoderFfn();
        this.tokens = tokens;
        this.maxPrompt = maxPrompt;

        DeviceWeights up = new DeviceWeights(pool, stream, staging);
        layers = new Layer[detector.encoderLayers()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = load(up, sd, Sam3Fusion.LAYERS_PREFIX + i + ".");
        }
        long n = tokens;
        image = pool.allocateBf16(n * d, "sam3 fusion image tokens");
        pos = pool.allocateBf16(n * d, "sam3 fusion position");
        prompt = pool.allocateBf16((long) maxPrompt * d, "sam3 fusion prompt (valid rows)");
        x = pool.allocateBf16(n * d, "sam3 fusion tokens x");
        xn = pool.allocateBf16(n * d, "sam3 fusion normalized tokens");
        qk = pool.allocateBf16(n * 2 * d, "sam3 fusion q+k / cross q");
        v = pool.allocateBf16(n * d, "sam3 fusion self-attention v");
        attn = pool.allocateBf16(n * d, "sam3 fusion attention output / tokens + position");
        kv = pool.allocateBf16((long) maxPrompt * 2 * d, "sam3 fusion prompt k+v");
        wide = pool.allocateBf16(n * ffn, "sam3 fusion ffn hidden");
    }

    /** The bf16 image tokens {@code [tokens, d]} a pass reads. */
    public DeviceBuffer input() {
        return image;
    }

    /** The bf16 sine position {@code [tokens, d]} a pass adds to queries and keys. */
    public DeviceBuffer position() {
        return pos;
    }

    /** The bf16 valid prompt rows {@code [≤ maxPrompt, d]} a pass attends to. */
    public DeviceBuffer promptRows() {
        return prompt;
    }

    /** The bf16 memory {@code [tokens, d]} a pass leaves. */
    public DeviceBuffer output() {
        return x;
    }

    /**
     * The memory of one image and prompt: the tokens, position and the prompt's valid rows uploaded as bf16, one
     * pass, the memory brought back as fp32. Synchronous.
     */
    @Override
    public FeatureMap forward(FeatureMap imageTokens, float[] position, int tokenCount, Prompt p) {
        int m = stage(imageTokens, position, tokenCount, p);
        StagedCopy.uploadBf16(stream, staging, imageTokens.values(), image);
        forward(m);
        return FeatureMap.of(StagedCopy.downloadBf16(stream, staging, x, (long) tokens * d));
    }

    /**
     * Checks a pass's inputs and uploads the position (unless it is the very array uploaded last: the seam's arrays
     * are never written by their readers) and the prompt's valid rows; the image tokens are the caller's. Returns the
     * valid prompt tokens, {@link #forward(DeviceBuffer, int)}'s second argument.
     */
    public int stage(FeatureMap imageTokens, float[] position, int tokenCount, Prompt p) {
        Sam3Fusion.checkInputs(imageTokens, position, tokenCount, p, d);
        if (tokenCount != tokens) {
            throw new IllegalArgumentException("the CUDA fusion encoder was sized for " + tokens + " image tokens, got "
                    + tokenCount);
        }
        float[] valid = validRows(p, d);
        int m = valid.length / d;
        if (m > maxPrompt) {
            throw new IllegalArgumentException("a prompt of " + m + " valid tokens; the CUDA fusion encoder takes at "
                    + "most " + maxPrompt + " (the phrase's and up to " + CudaSam3.MAX_EXEMPLAR_BOXES
                    + " exemplar boxes + 1)");
        }
        if (position != uploadedPos) {
            uploadedPos = null;
            StagedCopy.uploadBf16(stream, staging, position, pos);
            uploadedPos = position;
        }
        StagedCopy.uploadBf16(stream, staging, valid, prompt);
        return m;
    }

    /**
     * Queues one pass from {@link #input}, {@link #position} and the first {@code promptTokens} rows of
     * {@link #promptRows} to {@link #output}.
     */
    public void forward(int promptTokens) {
        forward(image, promptTokens);
    }

    /** {@link #forward(int)} reading the image tokens {@code [tokens, d]} (bf16) from {@code imageTokens}, unchanged. */
    public void forward(DeviceBuffer imageTokens, int promptTokens) {
        if (promptTokens < 1 || promptTokens > maxPrompt) {
            throw new IllegalArgumentException("prompt tokens " + promptTokens + " (1 to " + maxPrompt + ")");
        }
        for (int i = 0; i < layers.length; i++) {
            layer(layers[i], i == 0 ? imageTokens : x, promptTokens);
        }
    }

    /** One pre-LN layer reading the tokens from {@code src} (the input or x), leaving them in x. */
    private void layer(Layer l, DeviceBuffer src, int m) {
        int n = tokens;
        float scale = (float) (1.0 / Math.sqrt(hd));
        // self-attention: q, k of norm1(x) + pos, v of norm1(x)
        norm.layerNorm(stream, src, l.norm1.w(), l.norm1.b(), xn, n, d, EPS);
        ops.add(stream, xn, pos, attn, (long) n * d);
        gemm.run(stream, attn, l.selfQk.w(), l.selfQk.b(), null, qk, n, 2 * d, d, false);
        gemm.run(stream, xn, l.selfV.w(), l.selfV.b(), null, v, n, d, d, false);
        DeviceBuffer k = qk.slice((long) d * 2, qk.bytes() - (long) d * 2, "sam3 fusion k");
        ops.sdpa(stream, new Rows(qk, 2 * d, (long) n * 2 * d), new Rows(k, 2 * d, (long) n * 2 * d),
                new Rows(v, d, (long) n * d), new Rows(attn, d, (long) n * d), 1, n, n, heads, hd, scale);
        gemm.run(stream, attn, l.selfOut.w(), l.selfOut.b(), src, x, n, d, d, false);
        // cross-attention to the prompt's valid rows
        norm.layerNorm(stream, x, l.norm2.w(), l.norm2.b(), xn, n, d, EPS);
        gemm.run(stream, xn, l.crossQ.w(), l.crossQ.b(), null, qk, n, d, d, false);
        gemm.run(stream, prompt, l.crossKv.w(), l.crossKv.b(), null, kv, m, 2 * d, d, false);
        DeviceBuffer pv = kv.slice((long) d * 2, kv.bytes() - (long) d * 2, "sam3 fusion prompt v");
        ops.sdpa(stream, new Rows(qk, d, (long) n * d), new Rows(kv, 2 * d, (long) m * 2 * d),
                new Rows(pv, 2 * d, (long) m * 2 * d), new Rows(attn, d, (long) n * d), 1, n, m, heads, hd, scale);
        gemm.run(stream, attn, l.crossOut.w(), l.crossOut.b(), x, x, n, d, d, false);
        // feed-forward
        norm.layerNorm(stream, x, l.norm3.w(), l.norm3.b(), xn, n, d, EPS);
        gemm.run(stream, xn, l.linear1.w(), l.linear1.b(), null, wide, n, ffn, d, false);
        ops.relu(stream, wide, (long) n * ffn);
        gemm.run(stream, wide, l.linear2.w(), l.linear2.b(), x, x, n, d, ffn, false);
    }

    /** The pool owns the device memory; nothing to free here. */
    @Override
    public void close() {}

    // ------------------------------------------------------------------------------------------------
    // Sizes, checks and weights
    // ------------------------------------------------------------------------------------------------

    /**
     * Why the kernels cannot run this encoder over {@code tokens} image tokens and {@code maxPrompt} prompt tokens, as
     * an exception; nothing when they can.
     */
    public static void checkSupported(Sam3Config.Detector c, int tokens, int maxPrompt) {
        List<String> problems = new ArrayList<>();
        if (tokens < 1 || maxPrompt < 1) {
            problems.add(tokens + " image tokens and " + maxPrompt + " prompt tokens (at least 1 each)");
        }
        if (c.dModel() % 8 != 0 || c.dModel() > 2048) {
            problems.add("width " + c.dModel() + " (a multiple of 8 up to 2048)");
        }
        int hd = c.dModel() / Math.max(1, c.heads());
        if (c.heads() < 1 || c.dModel() % c.heads() != 0 || hd % 8 != 0 || Sam2Kernels.sdpaCeiling(hd) < 0) {
            problems.add("head width " + c.dModel() + "/" + c.heads() + " (a multiple of 8 up to 256)");
        }
        if (c.encoderFfn() % 8 != 0 || c.encoderFfn() < 8) {
            problems.add("feed-forward " + c.encoderFfn() + " (a multiple of 8)");
        }
        if (c.encoderLayers() < 1) {
            problems.add(c.encoderLayers() + " layers");
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the CUDA SAM 3 fusion encoder cannot run " + c + ": "
                    + String.join("; ", problems));
        }
    }

    /**
     * The pool this encoder takes: every layer's weights in bf16 (each tensor 256-byte aligned) plus the activations
     * of {@code tokens} image tokens and {@code maxPrompt} valid prompt tokens. No spare: the owner adds it.
     */
    public static long poolBytes(Sam3Config.Detector c, int tokens, int maxPrompt) {
        long d = c.dModel(), ffn = c.encoderFfn(), n = tokens, m = maxPrompt;
        long perLayer = 3 * 2 * align(d * 2)                          // norm1..3
                + align(2 * d * d * 2) + align(2 * d * 2) + align(d * d * 2) + align(d * 2)   // self q+k, v
                + align(d * d * 2) + align(d * 2)                     // self out
                + align(d * d * 2) + align(d * 2) + align(2 * d * d * 2) + align(2 * d * 2)   // cross q, k+v
                + align(d * d * 2) + align(d * 2)                     // cross out
                + align(ffn * d * 2) + align(ffn * 2) + align(d * ffn * 2) + align(d * 2);    // linear1, linear2
        long activations = 6 * align(n * d * 2) + align(n * 2 * d * 2) + align(m * d * 2) + align(m * 2 * d * 2)
                + align(n * ffn * 2);
        return c.encoderLayers() * perLayer + activations;
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }

    /** The rows of the prompt's tokens that are not padding, in order. */
    static float[] validRows(Prompt p, int d) {
        float[] out = new float[p.validTokens() * d];
        int at = 0;
        for (int t = 0; t < p.length(); t++) {
            if (!p.padding()[t]) {
                System.arraycopy(p.rows(), t * d, out, at, d);
                at += d;
            }
        }
        return out;
    }

    private Layer load(DeviceWeights up, StateDict sd, String p) {
        float[] selfIn = sd.get(p + "self_attn.in_proj_weight", 3 * d, d).data();
        float[] selfBias = sd.get(p + "self_attn.in_proj_bias", 3 * d).data();
        float[] crossIn = sd.get(p + "cross_attn_image.in_proj_weight", 3 * d, d).data();
        float[] crossBias = sd.get(p + "cross_attn_image.in_proj_bias", 3 * d).data();
        return new Layer(up.normBf16(sd, p + "norm1", d),
                rows(up, selfIn, selfBias, 0, 2, p + "self_attn.in_proj (q, k)"),
                rows(up, selfIn, selfBias, 2, 3, p + "self_attn.in_proj (v)"),
                up.linearBf16(sd, p + "self_attn.out_proj", d, d),
                up.normBf16(sd, p + "norm2", d),
                rows(up, crossIn, crossBias, 0, 1, p + "cross_attn_image.in_proj (q)"),
                rows(up, crossIn, crossBias, 1, 3, p + "cross_attn_image.in_proj (k, v)"),
                up.linearBf16(sd, p + "cross_attn_image.out_proj", d, d),
                up.normBf16(sd, p + "norm3", d),
                up.linearBf16(sd, p + "linear1", d, ffn),
                up.linearBf16(sd, p + "linear2", ffn, d));
    }

    /** Blocks {@code from..to} (of d rows each: query, key, value) of a packed in_proj weight and its bias, bf16. */
    private Bf16 rows(DeviceWeights up, float[] w, float[] b, int from, int to, String what) {
        return InProjection.rows(up, w, b, d, from, to, what);
    }
}
