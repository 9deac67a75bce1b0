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
import io.samstream.gpu.cuda.kernels.EncoderOpsKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.NormKernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels.Rows;
import io.samstream.gpu.cuda.kernels.WeightLayouts;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Prompt;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3MaskHead;
import io.samstream.gpu.sam3.VisionFeatures;
import java.util.ArrayList;
import java.util.List;

/**
 * SAM 3's mask head ({@code UniversalSegmentationHead} with its {@code PixelDecoder}) on the GPU in bf16 with fp32
 * accumulation, read the way the CPU reference ({@code sam3.MaskHead}) reads:
 * <ol>
 *   <li>{@code x = memory + cross_attend_prompt(cross_attn_norm(memory), prompt)}: the query GEMM, the prompt's valid
 *       rows' keys and values in one GEMM (the key padding dropped, as the fusion encoder drops it), SDPA, out_proj
 *       with the memory as its residual;</li>
 *   <li>twice: nearest 2x upsampling of x added onto the neck's next level (2x, then 4x), a 3x3 convolution (im2col
 *       rows and a GEMM), GroupNorm(8) and ReLU in place;</li>
 *   <li>{@code instance_seg_head} (a 1x1 convolution, a GEMM) gives the per-pixel embeddings [(4 grid)², d];</li>
 *   <li>the mask logits are one more GEMM, written query-major so that a query's mask is one contiguous run: the
 *       queries' mask embeddings (zero rows pad them to a multiple of 8) by the pixels, {@code [n, (4 grid)²]}.</li>
 * </ol>
 * The 3x3 convolutions' rows buffer is the caller's (CudaSam3 shares the necks'). Weights and the activations of up
 * to {@code maxQueries} queries and {@code maxPrompt} valid prompt tokens come from the pool; a pass allocates
 * nothing. Not thread-safe.
 */
public final class CudaSam3MaskHead implements Sam3MaskHead {
    private static final float EPS = (float) Sam3Config.NORM_EPS;

    private final CudaStream stream;
    private final PinnedBuffer staging;
    private final GemmKernels gemm;
    private final NormKernels norm;
    private final Sam2Kernels ops;
    private final EncoderOpsKernels encoderOps;
    private final int d, heads, grid, maxPrompt, maxQueries;
    private final Bf16 crossNorm, crossQ, crossKv, crossOut, instance;
    private final Bf16[] convs = new Bf16[2];
    private final DeviceBuffer[] gnWeight = new DeviceBuffer[2], gnBias = new DeviceBuffer[2];
    // inputs, activations and the borrowed im2col rows
    private final DeviceBuffer memory, prompt, level1, level0, embeddings, xn, q, kv, attn, x, conv, pixels, logits,
            groupScratch, rows;

    /**
     * Uploads the head's weights (bf16, the GroupNorms' fp32) and allocates its activations from {@code pool};
     * {@code rows} is scratch for the 3x3 convolutions' im2col ({@link #rowsValues} bf16 values), used only during a
     * pass.
     *
     * @throws IllegalArgumentException when the kernels cannot run these shapes ({@link #checkSupported})
     */
    public CudaSam3MaskHead(StateDict sd, Sam3Config config, int maxPrompt, int maxQueries, CudaKernels kernels,
                            CudaStream stream, DeviceMemoryPool pool, PinnedBuffer staging, DeviceBuffer rows) {
        checkSupported(config, maxPrompt, maxQueries);
        if (rows.bf16Capacity() < rowsValues(config)) {
            throw new IllegalArgumentException("the mask head's im2col rows need " + rowsValues(config)
                    + " bf16 values, the buffer holds " + rows.bf16Capacity());
        }
        Sam3Config.Detector c = config.detector();
        this.stream = stream;
        this.staging = staging;
        this.gemm = GemmKernels.of(kernels);
        this.norm = NormKernels.of(kernels);
        this.ops = Sam2Kernels.of(kernels);
        this.encoderOps = EncoderOpsKernels.of(kernels);
        this.d = c.dModel();
        this.heads = c.heads();
        this.grid = config.vision().grid();
        this.maxPrompt = maxPrompt;
        this.maxQueries = CudaSam3Vit.roundUp8(maxQueries);
        this.rows = rows;

        DeviceWeights up = new DeviceWeights(pool, stream, staging);
        String p = PREFIX;
        crossNorm = up.normBf16(sd, p + "cross_attn_norm", d);
        float[] in = sd.get(p + "cross_attend_prompt.in_proj_weight", 3 * d, d).data();
        float[] inBias = sd.get(p + "cross_attend_prompt.in_proj_bias", 3 * d).data();
        crossQ = InProjection.rows(up, in, inBias, d, 0, 1, p + "cross_attend_prompt.in_proj (q)");
        crossKv = InProjection.rows(up, in, inBias, d, 1, 3, p + "cross_attend_prompt.in_proj (k, v)");
        crossOut = up.linearBf16(sd, p + "cross_attend_prompt.out_proj", d, d);
        for (int i = 0; i < 2; i++) {
            String conv = p + "pixel_decoder.conv_layers." + i, gn = p + "pixel_decoder.norms." + i;
            convs[i] = new Bf16(up.bf16(WeightLayouts.conv3x3ChannelsLast(sd.get(conv + ".weight", d, d, 3, 3).data(),
                    d, d), conv + ".weight"), up.bf16(sd.get(conv + ".bias", d).data(), conv + ".bias"));
            gnWeight[i] = up.f32(sd.get(gn + ".weight", d).data(), gn + ".weight");
            gnBias[i] = up.f32(sd.get(gn + ".bias", d).data(), gn + ".bias");
        }
        instance = up.linearBf16(sd, p + "instance_seg_head", d, d);

        long t = (long) grid * grid, px1 = 4 * t, px0 = 16 * t;
        memory = pool.allocateBf16(t * d, "sam3 mask head memory");
        prompt = pool.allocateBf16((long) maxPrompt * d, "sam3 mask head prompt (valid rows)");
        level1 = pool.allocateBf16(px1 * d, "sam3 mask head level 2x (+ upsampled)");
        level0 = pool.allocateBf16(px0 * d, "sam3 mask head level 4x (+ upsampled)");
        embeddings = pool.allocateBf16((long) this.maxQueries * d, "sam3 mask head query embeddings");
        xn = pool.allocateBf16(t * d, "sam3 mask head normalized memory");
        q = pool.allocateBf16(t * d, "sam3 mask head q");
        kv = pool.allocateBf16((long) maxPrompt * 2 * d, "sam3 mask head prompt k+v");
        attn = pool.allocateBf16(t * d, "sam3 mask head attention output");
        x = pool.allocateBf16(t * d, "sam3 mask head x");
        conv = pool.allocateBf16(px0 * d, "sam3 mask head convolution output");
        pixels = pool.allocateBf16(px0 * d, "sam3 mask head pixel embeddings");
        logits = pool.allocateBf16(px0 * this.maxQueries, "sam3 mask head logits");
        groupScratch = pool.allocate(NormKernels.groupNormScratchBytes(GROUPS), "sam3 mask head group norm partials");
    }

    /**
     * The mask logits of one image, prompt and set of queries: the memory, the neck's 2x and 4x levels, the prompt's
     * valid rows and the embeddings uploaded as bf16, one pass, the logits brought back and laid out
     * {@code [n, (4 grid)²]}. Synchronous.
     */
    @Override
    public float[] masks(FeatureMap memoryRows, VisionFeatures image, Prompt p, float[] queryEmbeddings, int n) {
        int m = stage(memoryRows, image, p, queryEmbeddings, n);
        StagedCopy.uploadBf16(stream, staging, memoryRows.values(), memory);
        StagedCopy.uploadBf16(stream, staging, image.level(1).values(), level1);
        StagedCopy.uploadBf16(stream, staging, image.level(0).values(), level0);
        forward(memory, m, CudaSam3Vit.roundUp8(n));
        return logits(n);
    }

    /**
     * Checks a pass's inputs and uploads the prompt's valid rows and the embeddings (padded to a multiple of 8); the
     * memory and the levels ({@link #levelInput}) are the caller's. Returns the valid prompt tokens.
     */
    public int stage(FeatureMap memoryRows, VisionFeatures image, Prompt p, float[] queryEmbeddings, int n) {
        long t = (long) grid * grid;
        if (image.grid() != grid || memoryRows.length() != t * d) {
            throw new IllegalArgumentException("mask head: a memory of " + memoryRows.length() + " values on a "
                    + image.grid() + " grid; " + t * d + " on a " + grid + " grid expected");
        }
        if (n < 1 || n > maxQueries || queryEmbeddings.length != (long) n * d) {
            throw new IllegalArgumentException("mask head: " + n + " queries (1 to " + maxQueries + ") with "
                    + queryEmbeddings.length + " embedding values (" + d + " each)");
        }
        float[] valid = CudaSam3FusionEncoder.validRows(p, d);
        int m = valid.length / d;
        if (m < 1 || m > maxPrompt) {
            throw new IllegalArgumentException("mask head: a prompt of " + m + " valid tokens (1 to " + maxPrompt + ")");
        }
        int nPad = CudaSam3Vit.roundUp8(n);
        float[] e = new float[nPad * d];
        System.arraycopy(queryEmbeddings, 0, e, 0, n * d);
        StagedCopy.uploadBf16(stream, staging, valid, prompt);
        StagedCopy.uploadBf16(stream, staging, e, embeddings);
        return m;
    }

    /**
     * The buffer a pass reads neck level i (0: 4x, 1: 2x) from, {@code [(2^(2-i) grid)², d]} bf16; the pass adds to
     * it, so it is a copy of the level.
     */
    public DeviceBuffer levelInput(int i) {
        return i == 0 ? level0 : level1;
    }

    /** The bf16 memory {@code [grid², d]} {@link #forward(int, int)} reads (a caller's upload goes here). */
    public DeviceBuffer memoryInput() {
        return memory;
    }

    /**
     * The logits of the last pass's first {@code n} queries, {@code [n, (4 grid)²]} as the pass wrote them (the
     * padding queries' rows stay behind). Synchronous.
     */
    public float[] logits(int n) {
        return StagedCopy.downloadBf16(stream, staging, logits, (long) n * 16 * grid * grid);
    }

    /**
     * Queues one pass from the uploaded memory, levels, the first {@code promptTokens} prompt rows and {@code nPad}
     * embeddings (a multiple of 8) to the logits {@code [nPad, (4 grid)²]}; the levels' buffers are overwritten.
     */
    public void forward(int promptTokens, int nPad) {
        forward(memory, promptTokens, nPad);
    }

    /** {@link #forward(int, int)} reading the memory {@code [grid², d]} (bf16) from {@code memory}, unchanged. */
    public void forward(DeviceBuffer memory, int promptTokens, int nPad) {
        int t = grid * grid, hd = d / heads;
        float scale = (float) (1.0 / Math.sqrt(hd));
        norm.layerNorm(stream, memory, crossNorm.w(), crossNorm.b(), xn, t, d, EPS);
        gemm.run(stream, xn, crossQ.w(), crossQ.b(), null, q, t, d, d, false);
        gemm.run(stream, prompt, crossKv.w(), crossKv.b(), null, kv, promptTokens, 2 * d, d, false);
        DeviceBuffer v = kv.slice((long) d * 2, kv.bytes() - (long) d * 2, "sam3 mask head prompt v");
        ops.sdpa(stream, new Rows(q, d, (long) t * d), new Rows(kv, 2 * d, (long) promptTokens * 2 * d),
                new Rows(v, 2 * d, (long) promptTokens * 2 * d), new Rows(attn, d, (long) t * d), 1, t, promptTokens,
                heads, hd, scale);
        gemm.run(stream, attn, crossOut.w(), crossOut.b(), memory, x, t, d, d, false);
        upscale(0, x, grid, level1);
        upscale(1, conv, 2 * grid, level0);
        int px0 = 16 * t;
        gemm.run(stream, conv, instance.w(), instance.b(), null, pixels, px0, d, d, false);
        gemm.run(stream, embeddings, pixels, null, null, logits, nPad, px0, d, false);
    }

    /**
     * Step i of the pixel decoder: {@code level [(2 side)², d] += nearest2x(src [side², d])}, then the 3x3 convolution,
     * GroupNorm and ReLU into {@code conv}.
     */
    private void upscale(int i, DeviceBuffer src, int side, DeviceBuffer level) {
        int out = 2 * side;
        ops.upsample2xAdd(stream, src, level, 1, side, side, d);
        encoderOps.im2col3x3(stream, level, rows, 1, out, out, d);
        gemm.run(stream, rows, convs[i].w(), convs[i].b(), null, conv, out * out, d, 9 * d, false);
        norm.groupNorm(stream, conv, groupScratch, gnWeight[i], gnBias[i], (long) out * out, d, GROUPS, EPS, true);
    }

    /** The pool owns the device memory; nothing to free here. */
    @Override
    public void close() {}

    /** bf16 values of the im2col rows the 3x3 convolutions need: the 4x level's pixels times 9 d. */
    public static long rowsValues(Sam3Config config) {
        long side = 4L * config.vision().grid();
        return side * side * 9 * config.detector().dModel();
    }

    /** Why the kernels cannot run this head, as an exception naming what; nothing when they can. */
    public static void checkSupported(Sam3Config config, int maxPrompt, int maxQueries) {
        List<String> problems = new ArrayList<>();
        Sam3Config.Detector c = config.detector();
        int d = c.dModel();
        if (d % 8 != 0 || d % GROUPS != 0) {
            problems.add("width " + d + " (a multiple of 8 and of GroupNorm's " + GROUPS + " groups)");
        }
        int hd = d / Math.max(1, c.heads());
        if (c.heads() < 1 || d % c.heads() != 0 || hd % 8 != 0 || Sam2Kernels.sdpaCeiling(hd) < 0) {
            problems.add("head width " + d + "/" + c.heads() + " (a multiple of 8 up to 256)");
        }
        if (maxPrompt < 1 || maxQueries < 1) {
            problems.add(maxPrompt + " prompt tokens and " + maxQueries + " queries (at least 1 each)");
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the CUDA SAM 3 mask head cannot run " + c + ": "
                    + String.join("; ", problems));
        }
    }

    /**
     * The pool this head takes (its rows buffer is the caller's): weights in bf16 (the GroupNorms' in fp32), each
     * tensor 256-byte aligned, plus the activations. No spare: the owner adds it.
     */
    public static long poolBytes(Sam3Config config, int maxPrompt, int maxQueries) {
        long d = config.detector().dModel(), t = (long) config.vision().grid() * config.vision().grid();
        long n = CudaSam3Vit.roundUp8(maxQueries), m = maxPrompt;
        long weights = 2 * align(d * 2) + align(d * d * 2) + align(d * 2) + align(2 * d * d * 2) + align(2 * d * 2)
                + align(d * d * 2) + align(d * 2) + 2 * (align(9 * d * d * 2) + align(d * 2) + 2 * align(d * 4))
                + align(d * d * 2) + align(d * 2);
        long activations = 5 * align(t * d * 2) + align(m * d * 2) + align(m * 2 * d * 2) + align(4 * t * d * 2)
                + 3 * align(16 * t * d * 2) + align(n * d * 2) + align(16 * t * n * 2)
                + align(NormKernels.groupNormScratchBytes(GROUPS));
        return weights + activations;
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }
}
