package io.samstream.gpu.cuda.kernels;

import static io.samstream.gpu.cuda.LaunchChecks.ptr;
import static io.samstream.gpu.cuda.LaunchChecks.require;
import static io.samstream.gpu.cuda.LaunchChecks.requireBf16;
import static io.samstream.gpu.cuda.LaunchChecks.requireBytes;

import java.util.Locale;

import jcuda.Pointer;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;

/**
 * SAM 2's launchers: plain multi-head attention over strided query, key and value rows (sdpa.cuh), and the data
 * movement around Hiera's and the FPN neck's GEMMs (hiera_ops.cuh). Every argument is checked before a launch.
 */
public final class Sam2Kernels {
    /** Head-dim ceilings with an attention kernel; a head dim runs on the smallest that holds it. */
    static final int[] SDPA_HEAD_DIMS = {64, 96, 128, 256};
    /** Queries per attention CTA (4 warps of 16), as samstream_kernels.cu instantiates sdpa.cuh. */
    static final int SDPA_QUERIES = 64, SDPA_THREADS = 128;
    /**
     * The Hopper kernel at head dim 256 (sdpa_sm90.cuh, the memory attention's head on sm_90): 128 queries per CTA, a
     * producer and 2 consumer warpgroups, key tiles of 64; shared memory = sdpa_sm90::Config::SMEM_BYTES (Q, two
     * slots of K and V, barriers, alignment slack).
     */
    static final String SDPA_SM90 = "samstream_sdpa_sm90_hd256";
    static final int SDPA_SM90_HD = 256, SDPA_SM90_QUERIES = 128, SDPA_SM90_THREADS = 384, SDPA_SM90_KEY_TILE = 64;
    static final int SDPA_SM90_SMEM = 4 * SDPA_SM90_QUERIES * 128 + 2 * 2 * 4 * SDPA_SM90_KEY_TILE * 128 + 2 * 2 * 8
            + 1024;
    private static final String UNFOLD = "samstream_hiera_unfold_f32", PARTITION = "samstream_hiera_window_partition",
            UNPARTITION_ADD = "samstream_hiera_window_unpartition_add", MAXPOOL = "samstream_hiera_maxpool2x2",
            UPSAMPLE_ADD = "samstream_fpn_upsample2x_add", COMBINE = "samstream_sdpa_combine", ROPE = "samstream_mem_rope", RELU = "samstream_mem_relu",
            ADD = "samstream_mem_add", SCALED_MASK = "samstream_menc_scaled_mask",
            SHRINKAGE_COUNT = "samstream_menc_shrinkage_count",
            SCALED_MASK_SHRUNK = "samstream_menc_scaled_mask_shrunk",
            CONV3X3_S2 = "samstream_menc_conv3x3_s2", LN_GELU = "samstream_menc_layernorm_gelu",
            LN_GELU_BF16 = "samstream_menc_layernorm_gelu_bf16",
            DEPTHWISE = "samstream_menc_depthwise", COPY_SPANS = "samstream_step_copy_spans",
            NO_OBJECT = "samstream_step_no_object", NORMALIZE_RGB8 = "samstream_step_normalize_rgb8";
    /** Warps per CTA of the LayerNorm + GELU kernel (one pixel per warp). */
    private static final int LN_GELU_WARPS = 8;
    private static final int ELEMENTWISE_THREADS = 256;

    /** One strided row set of an attention operand: batch z's row i at {@code z * batch + i * ld} elements. */
    public record Rows(DeviceBuffer buffer, int ld, long batch) {}

    private final CudaKernels kernels;
    /** CTAs of each attention kernel (by symbol) one SM holds: what the key splits fill. */
    private final java.util.Map<String, Integer> sdpaResident = new java.util.concurrent.ConcurrentHashMap<>();

    /** The Sam2Kernels of {@code kernels} (made at the first call, which looks its kernels up). */
    public static Sam2Kernels of(CudaKernels kernels) {
        return kernels.family(Sam2Kernels.class, Sam2Kernels::new);
    }

    private Sam2Kernels(CudaKernels kernels) {
        this.kernels = kernels;
        for (int hd : SDPA_HEAD_DIMS) {
            kernels.add(sdpaSymbol(hd), sdpaSmem(hd));
        }
        kernels.add(SDPA_SM90, SDPA_SM90_SMEM);
        for (String name : new String[] {COMBINE, UNFOLD, PARTITION, UNPARTITION_ADD, MAXPOOL, UPSAMPLE_ADD, ROPE, RELU, ADD, SCALED_MASK,
                SHRINKAGE_COUNT, SCALED_MASK_SHRUNK, CONV3X3_S2, LN_GELU, LN_GELU_BF16, DEPTHWISE, COPY_SPANS, NO_OBJECT,
                NORMALIZE_RGB8}) {
            kernels.add(name, 0);
        }
    }

    static String sdpaSymbol(int ceiling) {
        return "samstream_sdpa_hd" + ceiling;
    }

    /** Keys per tile of a kernel: 64, 32 at head dim 256 (samstream_kernels.cu). */
    static int sdpaKeyTile(int ceiling) {
        return ceiling == 256 ? 32 : 64;
    }

    /** sdpa::smem_bytes: the query tile and two buffers of K and V tiles, rows of HD + 8 bf16. */
    static int sdpaSmem(int ceiling) {
        return (SDPA_QUERIES + 4 * sdpaKeyTile(ceiling)) * (ceiling + 8) * 2;
    }

    /** The smallest kernel ceiling holding head dim {@code hd}, or -1. */
    public static int sdpaCeiling(int hd) {
        for (int c : SDPA_HEAD_DIMS) {
            if (hd <= c) {
                return c;
            }
        }
        return -1;
    }

    /** Key splits at most ({@link #sdpa} with a scratch buffer). */
    public static final int MAX_SPLITS = 8;

    /** Scratch bytes {@link #sdpa} needs to split the keys of these shapes {@code splits} ways. */
    public static long splitScratchBytes(int batches, int heads, int nq, int hd, int splits) {
        return (long) splits * batches * heads * nq * ((long) hd * 4 + 8) + 256;
    }

    /**
     * {@code o = softmax(scale · q·kᵀ)·v} for {@code batches} independent sets of {@code nq} queries over {@code nk}
     * keys, {@code heads} heads of {@code hd} columns each (head h at columns h·hd of every row), in one pass.
     */
    public void sdpa(CudaStream stream, Rows q, Rows k, Rows v, Rows o, int batches, int nq, int nk, int heads,
                     int hd, float scale) {
        sdpa(stream, q, k, v, o, batches, nq, nk, heads, hd, scale, null);
    }

    /**
     * As above; when the query tiles are too few to fill the GPU and {@code scratch} (may be null) holds the partial
     * results ({@link #splitScratchBytes}), the keys are split up to {@value #MAX_SPLITS} ways and merged after.
     */
    public void sdpa(CudaStream stream, Rows q, Rows k, Rows v, Rows o, int batches, int nq, int nk, int heads,
                     int hd, float scale, DeviceBuffer scratch) {
        sdpa(stream, q, k, v, o, batches, nq, nk, heads, hd, scale, scratch, hopperSdpa(hd));
    }

    /** True when {@link #sdpa} runs head dim {@code hd} on the Hopper kernel: compute capability 9.0, head dim 256. */
    public boolean hopperSdpa(int hd) {
        return kernels.hopper() && hd == SDPA_SM90_HD;
    }

    /**
     * As above, on the Hopper kernel when {@code hopper} (tests and benchmarks run both kernels on the same inputs);
     * the Hopper kernel is refused where {@link #hopperSdpa} is false.
     */
    public void sdpa(CudaStream stream, Rows q, Rows k, Rows v, Rows o, int batches, int nq, int nk, int heads, int hd,
              float scale, DeviceBuffer scratch, boolean hopper) {
        String op = String.format(Locale.ROOT, "sdpa batches=%d nq=%d nk=%d heads=%d hd=%d", batches, nq, nk, heads,
                hd);
        require(batches > 0 && nq > 0 && nk > 0 && heads > 0 && hd > 0, op + ": dimensions must be positive");
        int ceiling = sdpaCeiling(hd);
        require(hd % 8 == 0 && ceiling > 0, op + ": head dim must be a multiple of 8 up to "
                + SDPA_HEAD_DIMS[SDPA_HEAD_DIMS.length - 1]);
        require(batches <= 65535 && heads <= 65535, op + ": too many batches or heads for one launch");
        require(Float.isFinite(scale) && scale > 0, op + ": scale must be positive");
        requireRows(op, "q", q, batches, nq, heads * hd);
        requireRows(op, "k", k, batches, nk, heads * hd);
        requireRows(op, "v", v, batches, nk, heads * hd);
        requireRows(op, "o", o, batches, nq, heads * hd);
        require(!hopper || (hd == SDPA_SM90_HD && kernels.hopper()), op + ": the Hopper kernel takes head dim "
                + SDPA_SM90_HD + " on compute capability 9.0");
        String symbol = hopper ? SDPA_SM90 : sdpaSymbol(ceiling);
        int queries = hopper ? SDPA_SM90_QUERIES : SDPA_QUERIES, threads = hopper ? SDPA_SM90_THREADS : SDPA_THREADS;
        int smem = hopper ? SDPA_SM90_SMEM : sdpaSmem(ceiling);
        int keyTile = hopper ? SDPA_SM90_KEY_TILE : sdpaKeyTile(ceiling);
        int qTiles = (nq + queries - 1) / queries;
        long slots = (long) kernels.context().info().multiprocessors() * sdpaResident.computeIfAbsent(symbol,
                name -> kernels.residentCtas(name, threads, smem));
        int splits = splits((long) qTiles * heads * batches, ceilDiv(nk, keyTile), slots);
        while (splits > 1 && (scratch == null || scratch.bytes() < splitScratchBytes(batches, heads, nq, hd, splits))) {
            splits = scratch == null ? 1 : splits - 1;
        }
        DeviceBuffer partO = null, partMl = null;
        if (splits > 1) {
            long oBytes = (long) splits * batches * heads * nq * hd * 4;
            partO = scratch.slice(0, oBytes, "sdpa split outputs");
            long mlAt = (oBytes + 255) / 256 * 256;
            partMl = scratch.slice(mlAt, scratch.bytes() - mlAt, "sdpa split max / sum");
        }
        // The Hopper kernel's head dim is fixed (no hd argument).
        Pointer params = hopper
                ? Pointer.to(ptr(q.buffer), ints(q.ld), longs(q.batch), ptr(k.buffer), ints(k.ld), longs(k.batch),
                        ptr(v.buffer), ints(v.ld), longs(v.batch), ptr(o.buffer), ints(o.ld), longs(o.batch), ints(nq),
                        ints(nk), Pointer.to(new float[] {scale}), ints(splits), ptr(partO), ptr(partMl))
                : Pointer.to(ptr(q.buffer), ints(q.ld), longs(q.batch), ptr(k.buffer), ints(k.ld), longs(k.batch),
                        ptr(v.buffer), ints(v.ld), longs(v.batch), ptr(o.buffer), ints(o.ld), longs(o.batch), ints(nq),
                        ints(nk), ints(hd), Pointer.to(new float[] {scale}), ints(splits), ptr(partO), ptr(partMl));
        kernels.launch(symbol, qTiles * splits, heads, batches, threads, smem, stream, params, op);
        if (splits > 1) {
            long total = (long) batches * heads * nq * hd;
            Pointer merge = Pointer.to(ptr(partO), ptr(partMl), ptr(o.buffer), ints(o.ld), longs(o.batch), ints(batches),
                    ints(heads), ints(nq), ints(hd), ints(splits));
            kernels.launch(COMBINE, gridFor(total), 1, 1, ELEMENTWISE_THREADS, 0, stream, merge, op + " (merge)");
        }
    }

    /**
     * Key splits for {@code ctas} CTAs over {@code keyTiles} key tiles when the GPU holds {@code slots} of them at
     * once: the fewest splits (at most {@value #MAX_SPLITS}, each of two tiles or more) with the least time in waves,
     * ceil(ctas x splits / slots) / splits, a split taken only for 10 % or more (the merge costs a little). A last
     * wave that is mostly empty costs as much as a full one: 64 CTAs on 264 slots take 4 splits (one wave), not 5
     * (1.2 waves, 60 % slower).
     */
    static int splits(long ctas, int keyTiles, long slots) {
        int best = 1;
        double bestCost = Math.ceil((double) ctas / slots);
        for (int s = 2; s <= Math.min(MAX_SPLITS, keyTiles / 2); s++) {
            double cost = Math.ceil((double) ctas * s / slots) / s;
            if (cost < 0.9 * bestCost) {
                best = s;
                bestCost = cost;
            }
        }
        return best;
    }

    private static void requireRows(String op, String name, Rows r, int batches, int rows, int width) {
        require(r.ld % 8 == 0 && r.ld >= width, op + ": " + name + " rows of " + r.ld + " (need a multiple of 8, at least "
                + width + ")");
        require(r.batch >= 0 && r.batch % 8 == 0, op + ": " + name + " batch stride " + r.batch + " (a multiple of 8)");
        requireBf16(r.buffer, (batches - 1) * r.batch + (long) (rows - 1) * r.ld + width, op, name);
    }

    /**
     * A {@code k x k} convolution's rows (stride, padding) of an fp32 planar image {@code [batch, cin, h, w]}: bf16
     * {@code [batch · oh · ow, kcols]}, columns (channel, ky, kx) as the flattened weight, zero past cin·k² (kcols
     * pads the row to a multiple of 8).
     */
    public void unfold(CudaStream stream, DeviceBuffer image, DeviceBuffer rows, int batch, int cin, int h, int w, int k,
                       int strideStep, int pad, int kcols) {
        String op = String.format(Locale.ROOT, "unfold batch=%d %dx%dx%d k=%d stride=%d", batch, cin, h, w, k,
                strideStep);
        require(batch > 0 && cin > 0 && h > 0 && w > 0 && k > 0 && strideStep > 0 && pad >= 0,
                op + ": dimensions must be positive");
        require(kcols >= cin * k * k && kcols % 8 == 0, op + ": kcols " + kcols + " must hold the taps, a multiple of 8");
        int oh = (h + 2 * pad - k) / strideStep + 1;
        int ow = (w + 2 * pad - k) / strideStep + 1;
        requireBytes(image, (long) batch * cin * h * w * 4, op, "image (fp32)");
        long total = (long) batch * oh * ow * kcols;
        requireBf16(rows, total, op, "rows");
        Pointer params = Pointer.to(ptr(image), ptr(rows), ints(batch), ints(cin), ints(h), ints(w), ints(k),
                ints(strideStep), ints(pad), ints(oh), ints(ow), ints(kcols));
        kernels.launch(UNFOLD, gridFor(total), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /** window_partition: {@code x [batch, h, w, c]} to windows {@code [batch, nwh, nww, ws, ws, c]}, zero padded. */
    public void windowPartition(CudaStream stream, DeviceBuffer x, DeviceBuffer windows, int batch, int h, int w, int c,
                                int ws) {
        String op = String.format(Locale.ROOT, "windowPartition batch=%d %dx%d c=%d window=%d", batch, h, w, c, ws);
        require(batch > 0 && h > 0 && w > 0 && ws > 0, op + ": dimensions must be positive");
        require(c > 0 && c % 8 == 0, op + ": c must be a positive multiple of 8");
        long padded = (long) batch * ceilDiv(h, ws) * ws * ceilDiv(w, ws) * ws;
        requireBf16(x, (long) batch * h * w * c, op, "x");
        requireBf16(windows, padded * c, op, "windows");
        Pointer params = Pointer.to(ptr(x), ptr(windows), ints(batch), ints(h), ints(w), ints(c), ints(ws));
        kernels.launch(PARTITION, gridFor(padded * c / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /**
     * window_unpartition added to the map: {@code x [batch, oh, ow, c] += a} where {@code a} holds windows
     * {@code [batch, nwh, nww, qs, qs, c]} covering the map; window positions past it are dropped.
     */
    public void windowUnpartitionAdd(CudaStream stream, DeviceBuffer a, DeviceBuffer x, int batch, int oh, int ow, int c,
                                     int qs, int nwh, int nww) {
        String op = String.format(Locale.ROOT, "windowUnpartitionAdd batch=%d %dx%d c=%d windows=%dx%d of %d", batch, oh,
                ow, c, nwh, nww, qs);
        require(batch > 0 && oh > 0 && ow > 0 && qs > 0, op + ": dimensions must be positive");
        require(c > 0 && c % 8 == 0, op + ": c must be a positive multiple of 8");
        require((long) nwh * qs >= oh && (long) nww * qs >= ow, op + ": the windows do not cover the map");
        requireBf16(a, (long) batch * nwh * nww * qs * qs * c, op, "a");
        requireBf16(x, (long) batch * oh * ow * c, op, "x");
        Pointer params = Pointer.to(ptr(a), ptr(x), ints(batch), ints(oh), ints(ow), ints(c), ints(qs), ints(nwh),
                ints(nww));
        kernels.launch(UNPARTITION_ADD, gridFor((long) batch * oh * ow * c / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream,
                params, op);
    }

    /**
     * 2x2 max pooling (stride 2, floor) of {@code n} grids of {@code h x w} rows of {@code c} channels read from
     * {@code src} (grid i's row j at {@code i · srcBatch + j · srcLd}) into contiguous {@code [n, h/2, w/2, c]}.
     */
    public void maxPool2x2(CudaStream stream, DeviceBuffer src, int srcLd, long srcBatch, DeviceBuffer dst, int n, int h,
                           int w, int c) {
        String op = String.format(Locale.ROOT, "maxPool2x2 n=%d %dx%d c=%d", n, h, w, c);
        require(n > 0 && h >= 2 && w >= 2, op + ": dimensions must be positive (at least 2x2)");
        require(c > 0 && c % 8 == 0 && srcLd % 8 == 0 && srcLd >= c && srcBatch % 8 == 0,
                op + ": c, the row and grid strides must be multiples of 8");
        requireBf16(src, (n - 1) * srcBatch + (long) (h * w - 1) * srcLd + c, op, "src");
        long out = (long) n * (h / 2) * (w / 2) * c;
        requireBf16(dst, out, op, "dst");
        Pointer params = Pointer.to(ptr(src), ints(srcLd), longs(srcBatch), ptr(dst), ints(n), ints(h), ints(w), ints(c));
        kernels.launch(MAXPOOL, gridFor(out / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /** The FPN's top-down step: {@code x [batch, 2h, 2w, c] +=} nearest 2x upsampling of {@code y [batch, h, w, c]}. */
    public void upsample2xAdd(CudaStream stream, DeviceBuffer y, DeviceBuffer x, int batch, int h, int w, int c) {
        String op = String.format(Locale.ROOT, "upsample2xAdd batch=%d %dx%d c=%d", batch, h, w, c);
        require(batch > 0 && h > 0 && w > 0, op + ": dimensions must be positive");
        require(c > 0 && c % 8 == 0, op + ": c must be a positive multiple of 8");
        requireBf16(y, (long) batch * h * w * c, op, "y");
        requireBf16(x, (long) batch * 4 * h * w * c, op, "x");
        Pointer params = Pointer.to(ptr(y), ptr(x), ints(batch), ints(h), ints(w), ints(c));
        kernels.launch(UPSAMPLE_ADD, gridFor((long) batch * 4 * h * w * c / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream,
                params, op);
    }

    /**
     * The memory attention's rotary encoding, in place: the first {@code rows} rows of {@code x} (row stride
     * {@code ld}), each of {@code heads} heads of {@code hd} columns rotated pair by pair by the angles of map token
     * {@code r % tokens} ({@code cos}, {@code sin}: fp32 {@code [tokens, hd/2]}).
     */
    public void rope(CudaStream stream, DeviceBuffer x, int ld, int rows, int heads, int hd, DeviceBuffer cos,
                     DeviceBuffer sin, int tokens) {
        String op = String.format(Locale.ROOT, "rope rows=%d heads=%d hd=%d tokens=%d", rows, heads, hd, tokens);
        require(rows >= 0 && heads > 0 && hd > 0 && tokens > 0, op + ": dimensions must be positive");
        require(hd % 4 == 0 && ld % 2 == 0 && ld >= heads * hd, op + ": hd must be a multiple of 4, rows wide enough");
        if (rows == 0) {
            return;
        }
        requireBf16(x, (long) (rows - 1) * ld + (long) heads * hd, op, "x");
        requireBytes(cos, (long) tokens * hd / 2 * 4, op, "cos (fp32)");
        requireBytes(sin, (long) tokens * hd / 2 * 4, op, "sin (fp32)");
        Pointer params = Pointer.to(ptr(x), ints(ld), ints(rows), ints(heads), ints(hd), ptr(cos), ptr(sin),
                ints(tokens));
        kernels.launch(ROPE, gridFor((long) rows * heads * hd / 2), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /** {@code x = max(x, 0)} over {@code n} bf16 values, in place. */
    public void relu(CudaStream stream, DeviceBuffer x, long n) {
        String op = "relu n=" + n;
        require(n > 0 && n % 8 == 0, op + ": n must be a positive multiple of 8");
        requireBf16(x, n, op, "x");
        kernels.launch(RELU, gridFor(n / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream, Pointer.to(ptr(x), longs(n)), op);
    }

    /** {@code y = a + b} over {@code n} bf16 values; {@code y} may be {@code a}. */
    public void add(CudaStream stream, DeviceBuffer a, DeviceBuffer b, DeviceBuffer y, long n) {
        String op = "add n=" + n;
        require(n > 0 && n % 8 == 0, op + ": n must be a positive multiple of 8");
        requireBf16(a, n, op, "a");
        requireBf16(b, n, op, "b");
        requireBf16(y, n, op, "y");
        kernels.launch(ADD, gridFor(n / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream, Pointer.to(ptr(a), ptr(b), ptr(y),
                longs(n)), op);
    }

    /**
     * The memory encoder's mask input: fp32 logits {@code [batch, l, l]} upsampled bilinearly to {@code [batch, s,
     * s]}, sigmoid (or binarized: a mask from prompts), x20 - 10.
     */
    public void scaledMask(CudaStream stream, DeviceBuffer logits, boolean binarize, DeviceBuffer out, int batch, int l,
                           int s) {
        String op = String.format(Locale.ROOT, "scaledMask batch=%d %d -> %d", batch, l, s);
        require(batch > 0 && l > 0 && s > 0, op + ": dimensions must be positive");
        requireBytes(logits, (long) batch * l * l * 4, op, "logits (fp32)");
        long total = (long) batch * s * s;
        requireBytes(out, total * 4, op, "out (fp32)");
        Pointer params = Pointer.to(ptr(logits), ints(binarize ? 1 : 0), ptr(out), ints(batch), ints(l), ints(s));
        kernels.launch(SCALED_MASK, gridFor(total), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /** Objects {@link #shrinkageCount} takes at once (memory_encoder_ops.cuh's SHRINK_MAX_OBJECTS). */
    public static final int SHRINK_MAX_OBJECTS = 64;

    /**
     * The areas of SAM 3's pixel-wise shrinkage rule over a concept's objects: fp32 logits {@code [objects, l, l]}
     * upsampled bilinearly to {@code [s, s]}; adds to int {@code counts[2k]} the pixels where object k is above 0 and
     * to {@code counts[2k + 1]} those where it is also the highest (the first of equals). The caller zeroes counts.
     */
    public void shrinkageCount(CudaStream stream, DeviceBuffer logits, int objects, int l, int s, DeviceBuffer counts) {
        String op = String.format(Locale.ROOT, "shrinkageCount objects=%d %d -> %d", objects, l, s);
        require(objects > 0 && objects <= SHRINK_MAX_OBJECTS, op + ": 1 to " + SHRINK_MAX_OBJECTS + " objects");
        require(l > 0 && s > 0, op + ": dimensions must be positive");
        requireBytes(logits, (long) objects * l * l * 4, op, "logits (fp32)");
        requireBytes(counts, 2L * objects * 4, op, "counts (int)");
        Pointer params = Pointer.to(ptr(logits), ints(objects), ints(l), ints(s), ptr(counts));
        kernels.launch(SHRINKAGE_COUNT, gridFor((long) s * s), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /**
     * Object {@code k}'s memory-encoder input after {@link #shrinkageCount}: its logits upsampled to {@code out [s,
     * s]} (fp32), clamped to at most -10 when it kept less than {@code threshold} of its area, sigmoid x20 - 10; fp32
     * {@code presence[0]} 1 when it was not suppressed and its area is not 0, else -1.
     */
    public void scaledMaskShrunk(CudaStream stream, DeviceBuffer logits, int k, int l, int s, DeviceBuffer counts,
            float threshold, DeviceBuffer out, DeviceBuffer presence) {
        String op = String.format(Locale.ROOT, "scaledMaskShrunk object=%d %d -> %d", k, l, s);
        require(k >= 0 && l > 0 && s > 0, op + ": dimensions must be positive");
        requireBytes(logits, (long) (k + 1) * l * l * 4, op, "logits (fp32)");
        requireBytes(counts, 2L * (k + 1) * 4, op, "counts (int)");
        requireBytes(out, (long) s * s * 4, op, "out (fp32)");
        requireBytes(presence, 4, op, "presence (fp32)");
        Pointer params = Pointer.to(ptr(logits), ints(k), ints(l), ints(s), ptr(counts),
                Pointer.to(new float[] {threshold}), ptr(out), ptr(presence));
        kernels.launch(SCALED_MASK_SHRUNK, gridFor((long) s * s), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /**
     * A 3x3, stride 2, padding 1 convolution in fp32, channels-last: {@code x [batch, h, w, cin]} to {@code [batch,
     * h/2, w/2, cout]}; {@code w} the Conv2d weight {@code [cout, cin, 3, 3]} in fp32.
     */
    public void conv3x3Stride2(CudaStream stream, DeviceBuffer x, DeviceBuffer w, DeviceBuffer bias, DeviceBuffer y,
                               int batch, int h, int wd, int cin, int cout) {
        String op = String.format(Locale.ROOT, "conv3x3Stride2 batch=%d %dx%dx%d -> %d", batch, h, wd, cin, cout);
        require(batch > 0 && h >= 2 && wd >= 2 && cin > 0 && cout > 0, op + ": dimensions must be positive");
        requireBytes(x, (long) batch * h * wd * cin * 4, op, "x (fp32)");
        requireBytes(w, (long) cout * cin * 9 * 4, op, "w (fp32)");
        requireBytes(bias, (long) cout * 4, op, "bias (fp32)");
        long total = (long) batch * (h / 2) * (wd / 2) * cout;
        requireBytes(y, total * 4, op, "y (fp32)");
        Pointer params = Pointer.to(ptr(x), ptr(w), ptr(bias), ptr(y), ints(batch), ints(h), ints(wd), ints(cin),
                ints(cout));
        kernels.launch(CONV3X3_S2, gridFor(total), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /**
     * LayerNorm2d over the {@code c} channels of each of {@code pixels} pixels (fp32, or bf16 when {@code bf16}),
     * then exact GELU, in place; also written as bf16 to {@code outBf16} when it is not null. fp32 gamma and beta.
     */
    public void layerNormGelu(CudaStream stream, DeviceBuffer x, boolean bf16, DeviceBuffer gamma, DeviceBuffer beta,
                              DeviceBuffer outBf16, long pixels, int c, float eps) {
        String op = String.format(Locale.ROOT, "layerNormGelu pixels=%d c=%d", pixels, c);
        require(pixels > 0 && c > 0, op + ": dimensions must be positive");
        require(eps > 0, op + ": eps must be positive");
        if (bf16) {
            requireBf16(x, pixels * c, op, "x");
        } else {
            requireBytes(x, pixels * c * 4, op, "x (fp32)");
        }
        requireBytes(gamma, (long) c * 4, op, "gamma (fp32)");
        requireBytes(beta, (long) c * 4, op, "beta (fp32)");
        if (outBf16 != null) {
            requireBf16(outBf16, pixels * c, op, "out");
        }
        Pointer params = Pointer.to(ptr(x), ptr(gamma), ptr(beta), ptr(outBf16), longs(pixels), ints(c),
                Pointer.to(new float[] {eps}));
        int ctas = (int) Math.min((pixels + LN_GELU_WARPS - 1) / LN_GELU_WARPS,
                (long) kernels.context().info().multiprocessors() * 16);
        kernels.launch(bf16 ? LN_GELU_BF16 : LN_GELU, ctas, 1, 1, 32 * LN_GELU_WARPS, 0, stream, params, op);
    }

    /**
     * A depthwise {@code k x k} convolution (padding k/2) of bf16 channels-last {@code x [batch, h, w, c]}, fp32
     * weights {@code [c, k, k]} and bias, into {@code y}.
     */
    public void depthwise(CudaStream stream, DeviceBuffer x, DeviceBuffer w, DeviceBuffer bias, DeviceBuffer y,
                          int batch, int h, int wd, int c, int k) {
        String op = String.format(Locale.ROOT, "depthwise batch=%d %dx%dx%d k=%d", batch, h, wd, c, k);
        require(batch > 0 && h > 0 && wd > 0 && c > 0 && k > 0 && k % 2 == 1, op + ": dimensions must be positive, k odd");
        long total = (long) batch * h * wd * c;
        requireBf16(x, total, op, "x");
        requireBf16(y, total, op, "y");
        requireBytes(w, (long) c * k * k * 4, op, "w (fp32)");
        requireBytes(bias, (long) c * 4, op, "bias (fp32)");
        Pointer params = Pointer.to(ptr(x), ptr(w), ptr(bias), ptr(y), ints(batch), ints(h), ints(wd), ints(c), ints(k));
        kernels.launch(DEPTHWISE, gridFor(total), 1, 1, ELEMENTWISE_THREADS, 0, stream, params, op);
    }

    /** Bytes of one entry of a copy table ({@link #copySpans}): source, destination, 16-byte chunks. */
    public static final int SPAN_BYTES = 24;
    /**
     * Appends one entry to a copy table for {@link #copySpans} (little-endian, as the kernel reads it): {@code bytes}
     * from device address {@code src} to {@code dst}, all three multiples of 16.
     */
    public static void putSpan(java.nio.ByteBuffer table, long src, long dst, long bytes) {
        if (src % 16 != 0 || dst % 16 != 0 || bytes % 16 != 0) {
            throw new IllegalStateException("copy of " + bytes + " B from " + src + " to " + dst
                    + " not 16-byte aligned");
        }
        table.putLong(src).putLong(dst).putLong(bytes / 16);
    }

    /** CTAs sharing one span of a copy table. */
    private static final int SPAN_SLICES = 16;

    /**
     * Runs the copy table {@code table} of {@code n} entries (each {@link #SPAN_BYTES}: source address, destination
     * address, 16-byte chunks, as longs; addresses 16-byte aligned), all in one launch. The entries are read on the
     * device when the launch runs: a captured graph replays whatever table the buffer holds then.
     */
    public void copySpans(CudaStream stream, DeviceBuffer table, int n) {
        String op = "copySpans n=" + n;
        require(n > 0, op + ": an empty table");
        requireBytes(table, (long) n * SPAN_BYTES, op, "table");
        require(table.address() % 8 == 0, op + ": table not 8-byte aligned");
        kernels.launch(COPY_SPANS, n, SPAN_SLICES, 1, ELEMENTWISE_THREADS, 0, stream, Pointer.to(ptr(table), ints(n)),
                op);
    }

    /**
     * {@code memory [batch, per]} (bf16) += {@code noObject [memDim]} repeated, for each object whose {@code scores}
     * entry (fp32 [batch]) is not above 0: the no-object embedding of an object the decoder judged absent.
     */
    public void noObjectWhereAbsent(CudaStream stream, DeviceBuffer memory, DeviceBuffer noObject, DeviceBuffer scores,
                                    int batch, long per, int memDim) {
        String op = String.format(Locale.ROOT, "noObjectWhereAbsent batch=%d per=%d memDim=%d", batch, per, memDim);
        require(batch > 0 && per > 0 && memDim > 0 && per % memDim == 0 && memDim % 8 == 0,
                op + ": per must be a multiple of memDim, memDim of 8");
        requireBf16(memory, batch * per, op, "memory");
        requireBf16(noObject, memDim, op, "noObject");
        requireBytes(scores, (long) batch * 4, op, "scores (fp32)");
        kernels.launch(NO_OBJECT, gridFor(batch * per / 8), 1, 1, ELEMENTWISE_THREADS, 0, stream,
                Pointer.to(ptr(memory), ptr(noObject), ptr(scores), ints(batch), longs(per), ints(memDim)), op);
    }

    /** 8-bit RGB frames {@code [batch, s, s, 3]} to the model's normalized fp32 input {@code [batch, 3, s, s]}. */
    public void normalizeRgb8(CudaStream stream, DeviceBuffer rgb, DeviceBuffer out, int batch, int s) {
        String op = String.format(Locale.ROOT, "normalizeRgb8 batch=%d side=%d", batch, s);
        require(batch > 0 && s > 0, op + ": dimensions must be positive");
        long pixels = (long) batch * s * s;
        requireBytes(rgb, pixels * 3, op, "rgb");
        requireBytes(out, pixels * 12, op, "out (fp32)");
        kernels.launch(NORMALIZE_RGB8, gridFor(pixels), 1, 1, ELEMENTWISE_THREADS, 0, stream,
                Pointer.to(ptr(rgb), ptr(out), ints(batch), ints(s)), op);
    }

    public static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }

    private static Pointer ints(int v) {
        return Pointer.to(new int[] {v});
    }

    private static Pointer longs(long v) {
        return Pointer.to(new long[] {v});
    }

    /** Grid-stride kernels: enough CTAs for a few waves, never more than the work needs. */
    private int gridFor(long threads) {
        long ctas = (threads + ELEMENTWISE_THREADS - 1) / ELEMENTWISE_THREADS;
        long cap = (long) kernels.context().info().multiprocessors() * 16;
        return (int) Math.max(1, Math.min(ctas, cap));
    }
}
