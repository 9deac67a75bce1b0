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
import io.samstream.gpu.sam2.HieraSchedule;
import io.samstream.gpu.sam2.Sam2Config;
import java.util.List;

/**
 * SAM 2's Hiera trunk ({@code hieradet.Hiera}) on the GPU in bf16 with fp32 accumulation, read the way the CPU
 * reference ({@code sam2.Hiera}, {@code sam2.HieraBlock}) reads. Tokens are channels-last rows throughout:
 * <ol>
 *   <li>patch embedding: the fp32 planar image unfolded into 7x7 stride-4 rows, one GEMM with the conv bias, + the
 *       position embedding ({@link HieraSchedule#positionEmbedding});</li>
 *   <li>each block ({@link HieraSchedule#blocks}): {@code x = shortcut + proj(attention(qkv(windows(norm1(x)))))},
 *       the windows zero-padded before the qkv Linear as in the reference (a global block: one window of the whole
 *       map); a stage's first block max-pools its queries 2x2 inside each window and its shortcut
 *       ({@code proj(norm1(x))}) over the map; then {@code x = x + mlp(norm2(x))} (GELU), the residual fused into
 *       the last GEMM's epilogue.</li>
 * </ol>
 * Each stage writes its own buffer, so the four stage outputs ({@link #stage}) stay for the neck. The weights and
 * the activations of {@code maxBatch} images come from the pool; a pass allocates nothing. Not thread-safe.
 */
final class CudaHiera {
    private static final float EPS = 1e-6f;
    /** The patch embedding: a 7x7 convolution, stride 4, padding 3. */
    private static final int PATCH = 7, PATCH_STRIDE = 4, PATCH_PAD = 3;

    private record Block(HieraSchedule.Block spec, Bf16 norm1, Bf16 qkv, Bf16 attnProj, Bf16 norm2, Bf16 mlp0,
                         Bf16 mlp1, Bf16 proj) {}

    private final Sam2Config config;
    private final CudaStream stream;
    private final GemmKernels gemm;
    private final NormKernels norm;
    private final Sam2Kernels ops;
    private final EncoderOpsKernels encoderOps;
    private final int side;
    private final int patchCols;

    private final Bf16 patch;
    private final DeviceBuffer posEmbed;
    private final Block[] blocks;
    // activations (largest batch)
    private final DeviceBuffer image, xn, windows, qkv, pooledQ, attn, projected, wide;
    private final DeviceBuffer[] stages = new DeviceBuffer[4];

    CudaHiera(StateDict sd, Sam2Config config, int maxBatch, CudaKernels kernels, CudaStream stream,
              DeviceMemoryPool pool, PinnedBuffer staging) {
        this.config = config;
        this.stream = stream;
        this.gemm = GemmKernels.of(kernels);
        this.norm = NormKernels.of(kernels);
        this.ops = Sam2Kernels.of(kernels);
        this.encoderOps = EncoderOpsKernels.of(kernels);
        this.side = config.imageSize() / 4;
        int c = config.embedDim();
        this.patchCols = (3 * PATCH * PATCH + 7) / 8 * 8;
        DeviceWeights up = new DeviceWeights(pool, stream, staging);
        String p = "image_encoder.trunk.";
        this.patch = new Bf16(up.bf16(padColumns(sd.get(p + "patch_embed.proj.weight", c, 3, PATCH, PATCH).data(), c,
                3 * PATCH * PATCH, patchCols), p + "patch_embed.proj.weight"),
                up.bf16(sd.get(p + "patch_embed.proj.bias", c).data(), p + "patch_embed.proj.bias"));
        this.posEmbed = up.bf16(HieraSchedule.positionEmbedding(sd, config), p + "pos_embed (resized + window)");
        List<HieraSchedule.Block> specs = HieraSchedule.blocks(config);
        this.blocks = new Block[specs.size()];
        for (HieraSchedule.Block b : specs) {
            blocks[b.index()] = load(up, sd, p + "blocks." + b.index() + ".", b);
        }

        Sizes s = sizes(config, maxBatch);
        image = pool.allocate((long) maxBatch * 3 * config.imageSize() * config.imageSize() * 4, "hiera input (fp32)");
        for (int i = 0; i < stages.length; i++) {
            stages[i] = pool.allocateBf16(s.stage[i], "hiera stage " + (i + 1));
        }
        xn = pool.allocateBf16(s.xn, "hiera normalized tokens");
        windows = pool.allocateBf16(s.windows, "hiera windows");
        qkv = pool.allocateBf16(s.qkv, "hiera qkv");
        pooledQ = pool.allocateBf16(Math.max(s.pooledQ, 8), "hiera pooled queries");
        attn = pool.allocateBf16(s.attn, "hiera attention output");
        projected = pool.allocateBf16(s.attn, "hiera attention projection");
        wide = pool.allocateBf16(Math.max(s.wide, (long) maxBatch * side * side * patchCols), "hiera wide");
    }

    /** The fp32 planar images {@code [B, 3, S, S]} a pass reads (normalized as the model expects). */
    DeviceBuffer input() {
        return image;
    }

    /** Stage {@code i}'s output (0: stride 4 ... 3: stride 32), channels-last {@code [B, side, side, stageDim(i)]}. */
    DeviceBuffer stage(int i) {
        return stages[i];
    }

    /** Queues one pass of {@code batch} images from {@link #input} to the four {@link #stage} buffers. */
    void forward(int batch) {
        int c = config.embedDim();
        int m = batch * side * side;
        ops.unfold(stream, image, wide, batch, 3, config.imageSize(), config.imageSize(), PATCH, PATCH_STRIDE, PATCH_PAD,
                patchCols);
        gemm.run(stream, wide, patch.w(), patch.b(), null, stages[0], m, c, patchCols, false);
        encoderOps.addPeriodic(stream, stages[0], posEmbed, (long) m * c, (long) side * side * c);
        int h = side;
        for (Block b : blocks) {
            block(b, batch, h);
            if (b.spec.pool()) {
                h /= 2;
            }
        }
    }

    /** One {@code MultiScaleBlock} on a map of {@code h x h}: reads the previous stage's buffer when it pools. */
    private void block(Block b, int batch, int h) {
        HieraSchedule.Block spec = b.spec;
        int dim = spec.dim(), dimOut = spec.dimOut();
        DeviceBuffer in = stages[spec.pool() || spec.projects() ? spec.stage() - 1 : spec.stage()];
        DeviceBuffer out = stages[spec.stage()];
        int n = batch * h * h;
        norm.layerNorm(stream, in, b.norm1.w(), b.norm1.b(), xn, n, dim, EPS);
        int oh = spec.pool() ? h / 2 : h;
        if (spec.projects()) {
            // the shortcut: proj(norm1(x)), max-pooled when the block pools
            gemm.run(stream, xn, b.proj.w(), b.proj.b(), null, spec.pool() ? wide : out, n, dimOut, dim, false);
            if (spec.pool()) {
                ops.maxPool2x2(stream, wide, dimOut, (long) h * h * dimOut, out, batch, h, h, dimOut);
            }
        } else if (in != out) {
            throw new IllegalStateException("block " + spec.index() + " changes stage without a projection");
        }
        int ws = spec.window() > 0 ? spec.window() : h;
        int nwh = Sam2Kernels.ceilDiv(h, ws);
        int nWin = batch * nwh * nwh;
        int tokens = ws * ws;
        ops.windowPartition(stream, xn, windows, batch, h, h, dim, ws);
        gemm.run(stream, windows, b.qkv.w(), b.qkv.b(), null, qkv, nWin * tokens, 3 * dimOut, dim, false);
        int qkvLd = 3 * dimOut;
        long qkvBatch = (long) tokens * qkvLd;
        int qs = ws;
        Rows q = new Rows(qkv, qkvLd, qkvBatch);
        if (spec.pool()) {
            qs = ws / 2;
            ops.maxPool2x2(stream, qkv, qkvLd, qkvBatch, pooledQ, nWin, ws, ws, dimOut);
            q = new Rows(pooledQ, dimOut, (long) qs * qs * dimOut);
        }
        int nq = qs * qs;
        Rows k = new Rows(qkv.slice((long) dimOut * 2, qkv.bytes() - (long) dimOut * 2, "hiera k"), qkvLd, qkvBatch);
        Rows v = new Rows(qkv.slice((long) dimOut * 4, qkv.bytes() - (long) dimOut * 4, "hiera v"), qkvLd, qkvBatch);
        int hd = spec.headDim();
        ops.sdpa(stream, q, k, v, new Rows(attn, dimOut, (long) nq * dimOut), nWin, nq, tokens, spec.heads(), hd,
                (float) (1.0 / Math.sqrt(hd)));
        gemm.run(stream, attn, b.attnProj.w(), b.attnProj.b(), null, projected, nWin * nq, dimOut, dimOut, false);
        ops.windowUnpartitionAdd(stream, projected, out, batch, oh, oh, dimOut, qs, nwh, nwh);
        int mOut = batch * oh * oh;
        norm.layerNorm(stream, out, b.norm2.w(), b.norm2.b(), xn, mOut, dimOut, EPS);
        gemm.run(stream, xn, b.mlp0.w(), b.mlp0.b(), null, wide, mOut, 4 * dimOut, dimOut, true);
        gemm.run(stream, wide, b.mlp1.w(), b.mlp1.b(), out, out, mOut, dimOut, 4 * dimOut, false);
    }

    // ------------------------------------------------------------------------------------------------
    // Sizes and weights
    // ------------------------------------------------------------------------------------------------

    /** Elements of each activation buffer for a batch, the largest over the blocks. */
    private record Sizes(long[] stage, long xn, long windows, long qkv, long pooledQ, long attn, long wide) {}

    private static Sizes sizes(Sam2Config config, int batch) {
        long[] stage = new long[4];
        long xn = 0, windows = 0, qkv = 0, pooledQ = 0, attn = 0, wide = 0;
        int h = config.imageSize() / 4;
        for (HieraSchedule.Block b : HieraSchedule.blocks(config)) {
            int ws = b.window() > 0 ? b.window() : h;
            long nWin = (long) batch * Sam2Kernels.ceilDiv(h, ws) * Sam2Kernels.ceilDiv(h, ws);
            int oh = b.pool() ? h / 2 : h;
            int qs = b.pool() ? ws / 2 : ws;
            stage[b.stage()] = Math.max(stage[b.stage()], (long) batch * oh * oh * b.dimOut());
            xn = Math.max(xn, (long) batch * h * h * Math.max(b.dim(), b.dimOut()));
            windows = Math.max(windows, nWin * ws * ws * b.dim());
            qkv = Math.max(qkv, nWin * ws * ws * 3L * b.dimOut());
            if (b.pool()) {
                pooledQ = Math.max(pooledQ, nWin * qs * qs * b.dimOut());
            }
            attn = Math.max(attn, nWin * qs * qs * b.dimOut());
            wide = Math.max(wide, Math.max((long) batch * oh * oh * 4 * b.dimOut(),
                    b.projects() ? (long) batch * h * h * b.dimOut() : 0));
            h = oh;
        }
        return new Sizes(stage, xn, windows, qkv, pooledQ, attn, wide);
    }

    private static Block load(DeviceWeights up, StateDict sd, String p, HieraSchedule.Block b) {
        int dim = b.dim(), out = b.dimOut();
        return new Block(b, up.normBf16(sd, p + "norm1", dim), up.linearBf16(sd, p + "attn.qkv", dim, 3 * out),
                up.linearBf16(sd, p + "attn.proj", out, out), up.normBf16(sd, p + "norm2", out),
                up.linearBf16(sd, p + "mlp.layers.0", out, 4 * out), up.linearBf16(sd, p + "mlp.layers.1", 4 * out, out),
                b.projects() ? up.linearBf16(sd, p + "proj", dim, out) : null);
    }

    /** A {@code [rows, cols]} matrix with its rows zero-padded to {@code width} columns. */
    static float[] padColumns(float[] w, int rows, int cols, int width) {
        float[] out = new float[rows * width];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(w, r * cols, out, r * width, cols);
        }
        return out;
    }
}
