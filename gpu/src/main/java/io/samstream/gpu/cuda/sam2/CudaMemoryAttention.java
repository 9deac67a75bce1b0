package io.samstream.gpu.cuda.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights.Bf16;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.EncoderOpsKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.NormKernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels.Rows;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.sam2.MemoryAttention;
import io.samstream.gpu.sam2.PositionEncodings;
import io.samstream.gpu.sam2.RotaryEncoding;
import io.samstream.gpu.sam2.Sam2Config;

/**
 * SAM 2's memory attention ({@code MemoryAttention}, SAM 2.1 settings) on the GPU in bf16, read as the CPU reference
 * ({@code sam2.MemoryAttention}) reads: {@code x = curr + 0.1 · curr_pos}, then per layer
 * <ol>
 *   <li>{@code x += out(attn(rope(q), rope(k), v))} over {@code norm1(x)} (q, k and v from one fused GEMM);</li>
 *   <li>{@code x += out(attn(rope(q(norm2(x))), rope(k(memory + memory_pos)), v(memory)))}, the object-pointer
 *       tokens at the end of each memory left unrotated;</li>
 *   <li>{@code x += linear2(relu(linear1(norm3(x))))};</li>
 * </ol>
 * then a LayerNorm, into {@link #output}. {@code batch} conditioned maps go through one pass, each with its own
 * memory of {@code m} tokens (the same count for all). The residual adds are fused into the GEMMs' epilogues. Weights
 * and the activations of {@code maxBatch} maps over up to {@code maxMemory} memory tokens come from the pool.
 * Not thread-safe.
 */
public final class CudaMemoryAttention {
    private static final float EPS = 1e-5f;

    private record Layer(Bf16 norm1, Bf16 selfQkv, Bf16 selfOut, Bf16 norm2, Bf16 crossQ, Bf16 crossK, Bf16 crossV,
                         Bf16 crossOut, Bf16 norm3, Bf16 linear1, Bf16 linear2) {}

    private final CudaStream stream;
    private final GemmKernels gemm;
    private final NormKernels norm;
    private final Sam2Kernels ops;
    private final EncoderOpsKernels encoderOps;
    private final int dim, memDim, heads, ffn, tokens, maxBatch, maxMemory;
    private final Layer[] layers;
    private final Bf16 finalNorm;
    private final DeviceBuffer ropeCos, ropeSin, scaledPos;
    private final DeviceBuffer x, xn, qkv, q, keys, k, v, attn, hidden, out, splitScratch;

    public CudaMemoryAttention(StateDict sd, Sam2Config config, int maxBatch, int maxMemory, CudaKernels kernels,
                               CudaStream stream, DeviceMemoryPool pool, PinnedBuffer staging) {
        if (maxBatch < 1 || maxMemory < 1) {
            throw new IllegalArgumentException("batch and memory must be at least 1, got " + maxBatch + ", "
                    + maxMemory);
        }
        this.stream = stream;
        this.gemm = GemmKernels.of(kernels);
        this.norm = NormKernels.of(kernels);
        this.ops = Sam2Kernels.of(kernels);
        this.encoderOps = EncoderOpsKernels.of(kernels);
        this.dim = config.hidden();
        this.memDim = config.memDim();
        this.heads = config.layout().memAttnHeads();
        this.ffn = config.memAttnFfn();
        this.tokens = config.featureSize() * config.featureSize();
        this.maxBatch = maxBatch;
        this.maxMemory = maxMemory;
        DeviceWeights up = new DeviceWeights(pool, stream, staging);
        this.layers = new Layer[config.memAttnLayers()];
        for (int i = 0; i < layers.length; i++) {
            String p = "memory_attention.layers." + i + ".";
            String s = p + "self_attn.", c = p + "cross_attn_image.";
            layers[i] = new Layer(up.normBf16(sd, p + "norm1", dim), fused(up, sd, s),
                    up.linearBf16(sd, s + "out_proj", dim, dim), up.normBf16(sd, p + "norm2", dim),
                    up.linearBf16(sd, c + "q_proj", dim, dim), up.linearBf16(sd, c + "k_proj", memDim, dim),
                    up.linearBf16(sd, c + "v_proj", memDim, dim), up.linearBf16(sd, c + "out_proj", dim, dim),
                    up.normBf16(sd, p + "norm3", dim), up.linearBf16(sd, p + "linear1", dim, ffn),
                    up.linearBf16(sd, p + "linear2", ffn, dim));
        }
        this.finalNorm = up.normBf16(sd, "memory_attention.norm", dim);
        RotaryEncoding rope = new RotaryEncoding(dim / heads, config.featureSize(), MemoryAttention.ROPE_THETA);
        this.ropeCos = up.f32(rope.cosTable(), "memory attention rope cos");
        this.ropeSin = up.f32(rope.sinTable(), "memory attention rope sin");
        float[] pos = PositionEncodings.sine2d(config.featureSize(), config.featureSize(), dim);
        for (int i = 0; i < pos.length; i++) {
            pos[i] *= 0.1f;
        }
        this.scaledPos = up.bf16(pos, "memory attention 0.1 * curr_pos");

        long n = (long) maxBatch * tokens;
        long mem = (long) maxBatch * maxMemory;
        x = pool.allocateBf16(n * dim, "memory attention x");
        xn = pool.allocateBf16(n * dim, "memory attention normalized x");
        qkv = pool.allocateBf16(n * 3 * dim, "memory attention self qkv");
        q = pool.allocateBf16(n * dim, "memory attention cross q");
        keys = pool.allocateBf16(mem * memDim, "memory attention memory + pos");
        k = pool.allocateBf16(mem * dim, "memory attention cross k");
        v = pool.allocateBf16(mem * dim, "memory attention cross v");
        attn = pool.allocateBf16(n * dim, "memory attention output of attention");
        hidden = pool.allocateBf16(n * ffn, "memory attention feed-forward");
        out = pool.allocateBf16(n * dim, "memory attention output");
        splitScratch = pool.allocate(Sam2Kernels.splitScratchBytes(maxBatch, heads, tokens, dim / heads,
                Sam2Kernels.MAX_SPLITS), "memory attention key splits");
    }

    /** The conditioned maps {@code [batch, tokens, hidden]} a pass leaves (bf16). */
    public DeviceBuffer output() {
        return out;
    }

    /**
     * Queues one pass: {@code curr} {@code [batch, tokens, hidden]} conditioned on {@code memory} and its position
     * {@code memoryPos} (both {@code [batch, m, memDim]}), whose last {@code pointerTokens} rows per map are object
     * pointers (m - pointerTokens must be a whole number of maps).
     */
    public void forward(int batch, DeviceBuffer curr, DeviceBuffer memory, DeviceBuffer memoryPos, int m,
                        int pointerTokens) {
        if (batch < 1 || batch > maxBatch || m < 1 || m > maxMemory || pointerTokens < 0 || pointerTokens > m
                || (m - pointerTokens) % tokens != 0) {
            throw new IllegalArgumentException("memory attention of " + batch + " map(s) over " + m + " memory tokens ("
                    + pointerTokens + " pointers): at most " + maxBatch + " maps and " + maxMemory + " tokens, the "
                    + "spatial ones a whole number of " + tokens + "-token maps");
        }
        int n = batch * tokens;
        int rows = batch * m;
        int hd = dim / heads;
        float scale = (float) (1.0 / Math.sqrt(hd));
        stream.copy(curr, x, (long) n * dim * 2);
        encoderOps.addPeriodic(stream, x, scaledPos, (long) n * dim, (long) tokens * dim);
        ops.add(stream, memory, memoryPos, keys, (long) rows * memDim);
        for (Layer l : layers) {
            // self-attention
            norm.layerNorm(stream, x, l.norm1.w(), l.norm1.b(), xn, n, dim, EPS);
            gemm.run(stream, xn, l.selfQkv.w(), l.selfQkv.b(), null, qkv, n, 3 * dim, dim, false);
            DeviceBuffer qkvK = qkv.slice((long) dim * 2, qkv.bytes() - (long) dim * 2, "self k");
            DeviceBuffer qkvV = qkv.slice((long) dim * 4, qkv.bytes() - (long) dim * 4, "self v");
            ops.rope(stream, qkv, 3 * dim, n, heads, hd, ropeCos, ropeSin, tokens);
            ops.rope(stream, qkvK, 3 * dim, n, heads, hd, ropeCos, ropeSin, tokens);
            long selfBatch = (long) tokens * 3 * dim;
            ops.sdpa(stream, new Rows(qkv, 3 * dim, selfBatch), new Rows(qkvK, 3 * dim, selfBatch),
                    new Rows(qkvV, 3 * dim, selfBatch), new Rows(attn, dim, (long) tokens * dim), batch, tokens, tokens,
                    heads, hd, scale, splitScratch);
            gemm.run(stream, attn, l.selfOut.w(), l.selfOut.b(), x, x, n, dim, dim, false);
            // cross-attention to the memory
            norm.layerNorm(stream, x, l.norm2.w(), l.norm2.b(), xn, n, dim, EPS);
            gemm.run(stream, xn, l.crossQ.w(), l.crossQ.b(), null, q, n, dim, dim, false);
            ops.rope(stream, q, dim, n, heads, hd, ropeCos, ropeSin, tokens);
            gemm.run(stream, keys, l.crossK.w(), l.crossK.b(), null, k, rows, dim, memDim, false);
            gemm.run(stream, memory, l.crossV.w(), l.crossV.b(), null, v, rows, dim, memDim, false);
            for (int b = 0; b < batch; b++) {
                long at = (long) b * m * dim * 2;
                ops.rope(stream, k.slice(at, k.bytes() - at, "cross k"), dim, m - pointerTokens, heads, hd, ropeCos,
                        ropeSin, tokens);
            }
            ops.sdpa(stream, new Rows(q, dim, (long) tokens * dim), new Rows(k, dim, (long) m * dim),
                    new Rows(v, dim, (long) m * dim), new Rows(attn, dim, (long) tokens * dim), batch, tokens, m, heads,
                    hd, scale, splitScratch);
            gemm.run(stream, attn, l.crossOut.w(), l.crossOut.b(), x, x, n, dim, dim, false);
            // feed-forward
            norm.layerNorm(stream, x, l.norm3.w(), l.norm3.b(), xn, n, dim, EPS);
            gemm.run(stream, xn, l.linear1.w(), l.linear1.b(), null, hidden, n, ffn, dim, false);
            ops.relu(stream, hidden, (long) n * ffn);
            gemm.run(stream, hidden, l.linear2.w(), l.linear2.b(), x, x, n, dim, ffn, false);
        }
        norm.layerNorm(stream, x, finalNorm.w(), finalNorm.b(), out, n, dim, EPS);
    }

    /** The self-attention's q, k and v projections as one Linear {@code [3 · hidden, hidden]}. */
    private Bf16 fused(DeviceWeights up, StateDict sd, String p) {
        float[] w = new float[3 * dim * dim];
        float[] b = new float[3 * dim];
        String[] parts = {"q_proj", "k_proj", "v_proj"};
        for (int i = 0; i < 3; i++) {
            System.arraycopy(sd.get(p + parts[i] + ".weight", dim, dim).data(), 0, w, i * dim * dim, dim * dim);
            System.arraycopy(sd.get(p + parts[i] + ".bias", dim).data(), 0, b, i * dim, dim);
        }
        return new Bf16(up.bf16(w, p + "qkv (fused)"), up.bf16(b, p + "qkv bias (fused)"));
    }
}
