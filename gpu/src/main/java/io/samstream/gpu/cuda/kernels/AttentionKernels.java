package io.samstream.gpu.cuda.kernels;

import static io.samstream.gpu.cuda.LaunchChecks.ptr;
import static io.samstream.gpu.cuda.LaunchChecks.require;
import static io.samstream.gpu.cuda.LaunchChecks.requireBf16;

import java.util.Locale;

import jcuda.Pointer;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;

/**
 * The image encoder's attention launchers: multi-head self-attention with SAM's decomposed relative position bias,
 * flash-style (online softmax), global and windowed (attention.cuh: mma.sync, every GPU; attention_sm90.cuh: warpgroup
 * MMA at head dim 64 on compute capability 9.0, chosen by {@link #attentionWgmma} / {@link #windowAttentionWgmma}).
 */
public final class AttentionKernels {
    /** Head dims with an attention kernel (vit_b / vit_l: 64, vit_h: 80; 16 and 32 for small SAM-family models). */
    static final int[] HEAD_DIMS = {16, 32, 64, 80};
    /**
     * Attention kernels: "row" (key tiles of one sequence row, for sequences wider than 32 tokens: global
     * attention; 4 warps, 64 queries per CTA) and "rows" (several rows per key tile: 14 x 14 windows;
     * 7 warps, 112 queries per CTA).
     */
    private static final int WARPS_ROW = 4, WARPS_ROWS = 7;
    private static final int BKV = 64, MAX_SIDE = 64;
    /**
     * The Hopper attention kernel (attention_sm90.cuh): global attention, head dim 64; 512 threads (a producer and
     * 3 consumer warpgroups), 192 queries per CTA. Shared memory = attention_sm90::Config::SMEM_BYTES: Q + 5
     * stages of K and V + the tables (rows of rel_stride(64, 64) floats) + 10 mbarriers + 1024 B of alignment slack.
     */
    private static final String SM90 = "samstream_attention_sm90_hd64";
    private static final int SM90_QUERIES = 192, SM90_THREADS = 512, SM90_STAGES = 5;
    static final int SM90_SMEM = SM90_QUERIES * 128 + SM90_STAGES * 2 * BKV * 128
            + SM90_QUERIES * (2 * MAX_SIDE + 2) * 4 + 2 * SM90_STAGES * 8 + 1024;
    /**
     * The windowed configuration (attention_sm90::WindowHalves; windows of 9 to 16 tokens a side, half a window per
     * CTA): 128 query slots per CTA (grid x = ceil(window² / 128)), 256 threads (2 consumer
     * warpgroups of 64 queries, no producer), two CTAs per SM. Shared memory = WindowHalves::SMEM_BYTES, asserted in
     * samstream_kernels.cu: Q + the whole window's K and V (4 tiles) + the staged Rh, Rw (2 x 32 rows of 72 bf16) +
     * the tables + 1024 B of alignment slack.
     */
    private static final String SM90W2 = "samstream_attention_sm90w2_hd64";
    private static final int SM90W_MIN = 9, SM90W_MAX = 16;
    static final int SM90W2_QUERIES = 128, SM90W2_THREADS = 256;
    static final int SM90W2_SMEM = SM90W2_QUERIES * 128 + 4 * 2 * BKV * 128
            + 2 * (2 * SM90W_MAX) * (64 + 8) * 2 + SM90W2_QUERIES * (2 * SM90W_MAX + 4 + 1) * 4 + 1024;

    private final CudaKernels kernels;

    /** The AttentionKernels of {@code kernels} (made at the first call, which looks its kernels up). */
    public static AttentionKernels of(CudaKernels kernels) {
        return kernels.family(AttentionKernels.class, AttentionKernels::new);
    }

    private AttentionKernels(CudaKernels kernels) {
        this.kernels = kernels;
        for (int hd : HEAD_DIMS) {
            for (boolean oneRow : new boolean[] {true, false}) {
                int most = 0;
                for (int seqW = oneRow ? BKV / 2 + 1 : 1; seqW <= (oneRow ? MAX_SIDE : BKV / 2); seqW++) {
                    most = Math.max(most, smem(hd, oneRow ? WARPS_ROW : WARPS_ROWS, MAX_SIDE, seqW));
                }
                kernels.add(symbol(hd, oneRow), most);
            }
        }
        kernels.add(SM90, SM90_SMEM);
        kernels.add(SM90W2, SM90W2_SMEM);
    }

    static String symbol(int headDim, boolean oneRow) {
        return "samstream_attention_hd" + headDim + (oneRow ? "_row" : "_rows");
    }

    /** Same formulas as attention::smem_bytes / rel_stride / rows_per_tile in attention.cuh. */
    static int smem(int headDim, int warps, int seqH, int seqW) {
        int rowsPerTile = seqW >= BKV ? 1 : BKV / seqW;
        int relStride = seqH + rowsPerTile + seqW + 1;
        return (16 * warps + 4 * BKV) * (headDim + 8) * 2 + 16 * warps * relStride * 4;
    }

    /**
     * True when {@link #run} runs on the Hopper kernel (attention_sm90.cuh): compute capability 9.0, global
     * attention (no window) over sequences wider than 32 tokens (key tiles of one sequence row), head dim 64
     * (vit_b, vit_l; vit_h's 80 stays on the mma.sync kernel).
     */
    public boolean attentionWgmma(int headDim, int window, int seqW) {
        return kernels.hopper() && headDim == 64 && window == 0 && seqW > BKV / 2;
    }

    /**
     * True when {@link #run} runs a windowed block on the Hopper kernel's windowed configuration (half a window
     * per CTA): compute capability 9.0, head dim 64, windows of 9 to 16 tokens a side (SAM's 14).
     */
    public boolean windowAttentionWgmma(int headDim, int window) {
        return kernels.hopper() && headDim == 64 && window >= SM90W_MIN && window <= SM90W_MAX;
    }

    /**
     * Multi-head self-attention of one encoder block with SAM's decomposed relative position bias, scale
     * {@code headDim^-0.5}.
     *
     * @param qkv     the qkv Linear output {@code [batch, h*w, 3*heads*headDim]} (q | k | v per token)
     * @param qkvBias that Linear's bias {@code [3*heads*headDim]}: the k, v of padded window positions; may
     *                be null (zeros) for global attention or when the grid is a multiple of the window
     * @param relH    {@code rel_pos_h} {@code [2*S_h-1, headDim]}, S_h = window, or h for global attention
     * @param relW    {@code rel_pos_w} {@code [2*S_w-1, headDim]}
     * @param out     {@code [batch, h*w, heads*headDim]}
     * @param window  window side (14 in SAM) for windowed blocks, 0 for global attention
     */
    public void run(CudaStream stream, DeviceBuffer qkv, DeviceBuffer qkvBias, DeviceBuffer relH,
                          DeviceBuffer relW, DeviceBuffer out, int batch, int h, int w, int heads, int headDim,
                          int window) {
        boolean wgmma = window > 0 ? windowAttentionWgmma(headDim, window) : attentionWgmma(headDim, window, w);
        run(stream, qkv, qkvBias, relH, relW, out, batch, h, w, heads, headDim, window, wgmma);
    }

    /**
     * As the method above, on the kernel named: {@code wgmma} the Hopper one (where {@link #attentionWgmma} or
     * {@link #windowAttentionWgmma} allows it), else the mma.sync one, which every GPU runs (tests compare the two).
     */
    public void run(CudaStream stream, DeviceBuffer qkv, DeviceBuffer qkvBias, DeviceBuffer relH, DeviceBuffer relW,
                          DeviceBuffer out, int batch, int h, int w, int heads, int headDim, int window, boolean wgmma) {
        String op = String.format(Locale.ROOT, "attention batch=%d grid=%dx%d heads=%d head_dim=%d window=%d", batch, h, w,
                heads, headDim, window);
        require(batch > 0 && h > 0 && w > 0 && heads > 0 && window >= 0, op + ": dimensions must be positive");
        require(headDim == 16 || headDim == 32 || headDim == 64 || headDim == 80,
                op + ": head_dim must be 64 (vit_b, vit_l), 80 (vit_h), 16 or 32");
        int seqH = window > 0 ? window : h, seqW = window > 0 ? window : w;
        require(seqH <= MAX_SIDE && seqW <= MAX_SIDE,
                op + ": sequences of at most " + MAX_SIDE + " x " + MAX_SIDE + " tokens are supported");
        int windows = window > 0 ? ((h + window - 1) / window) * ((w + window - 1) / window) : 1;
        long cTotal = (long) heads * headDim;
        long tokens = (long) batch * h * w;
        requireBf16(qkv, tokens * 3 * cTotal, op, "qkv");
        requireBf16(out, tokens * cTotal, op, "out");
        requireBf16(relH, (long) (2 * seqH - 1) * headDim, op, "relH");
        requireBf16(relW, (long) (2 * seqW - 1) * headDim, op, "relW");
        if (qkvBias != null) {
            requireBf16(qkvBias, 3 * cTotal, op, "qkvBias");
        }
        float scale = (float) (1.0 / Math.sqrt(headDim));
        long gridZ = (long) batch * windows;
        require(gridZ <= 65535, op + ": batch x windows must be at most 65535");
        Pointer params = Pointer.to(ptr(qkv), ptr(qkvBias), ptr(relH), ptr(relW), ptr(out), Pointer.to(new int[] {h}),
                Pointer.to(new int[] {w}), Pointer.to(new int[] {heads}), Pointer.to(new int[] {window}),
                Pointer.to(new float[] {scale}));
        require(!wgmma || (window > 0 ? windowAttentionWgmma(headDim, window) : attentionWgmma(headDim, window, w)),
                op + ": the Hopper attention kernel does not serve this shape on " + kernels.context().info().describe());
        if (wgmma && window > 0) {   // 128 query slots of a window per CTA
            int halves = (window * window + SM90W2_QUERIES - 1) / SM90W2_QUERIES;
            kernels.launch(SM90W2, halves, heads, (int) gridZ, SM90W2_THREADS, SM90W2_SMEM, stream, params, op);
            return;
        }
        if (wgmma) {
            Pointer globalParams = Pointer.to(ptr(qkv), ptr(relH), ptr(relW), ptr(out), Pointer.to(new int[] {h}),
                    Pointer.to(new int[] {w}), Pointer.to(new int[] {heads}), Pointer.to(new float[] {scale}));
            kernels.launch(SM90, (h * w + SM90_QUERIES - 1) / SM90_QUERIES, heads, batch, SM90_THREADS,
                    SM90_SMEM, stream, globalParams, op);
            return;
        }
        boolean oneRow = seqW > BKV / 2;
        int warps = oneRow ? WARPS_ROW : WARPS_ROWS;
        int smem = smem(headDim, warps, seqH, seqW);
        int queriesPerCta = 16 * warps;
        kernels.launch(symbol(headDim, oneRow), (seqH * seqW + queriesPerCta - 1) / queriesPerCta, heads, (int) gridZ,
                32 * warps, smem, stream, params, op);
    }
}
