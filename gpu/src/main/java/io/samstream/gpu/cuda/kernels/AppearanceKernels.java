package io.samstream.gpu.cuda.kernels;

import static io.samstream.gpu.cuda.LaunchChecks.require;

import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import jcuda.Pointer;

/**
 * The launchers of the tracker's appearance kernels, which read the embedding ring's bf16 {@code [E*E, C]} slots in
 * place: pooling under cell weights ({@code pool_ops.cuh}), appearance maps ({@code appearance_ops.cuh}) and camera
 * motion ({@code match_ops.cuh}). Their inputs are tables the caller has uploaded (one entry per request: the slot's
 * device address and what goes with it), passed as device addresses. Launches are asynchronous on the given stream
 * and not timed by {@link CudaKernels#timeLaunches}.
 */
public final class AppearanceKernels {
    static final String POOL = "samstream_pool_embedding";
    static final String CELL_SIMILARITY = "samstream_cell_similarity";
    static final String MATCH_SHIFTS = "samstream_match_shifts";
    private static final int THREADS = 256;
    /** Cells per block of the appearance maps: one warp each. */
    private static final int WARPS = THREADS / 32;

    private final CudaKernels kernels;

    /** The AppearanceKernels of {@code kernels} (made at the first call, which looks its kernels up). */
    public static AppearanceKernels of(CudaKernels kernels) {
        return kernels.family(AppearanceKernels.class, AppearanceKernels::new);
    }

    private AppearanceKernels(CudaKernels kernels) {
        this.kernels = kernels;
        // A fatbin without them fails here, not at the first frame.
        kernels.function(POOL);
        kernels.function(CELL_SIMILARITY);
        kernels.function(MATCH_SHIFTS);
    }

    /**
     * The mean of each of {@code requests} slots under its cell weights (one block per request): {@code slots} the
     * table of slot addresses (u64 each), {@code weights} fp32 {@code [requests, E*E]}, {@code bounds} i32
     * {@code [requests, 4]} ({@code y0, y1, x0, x1}, ends exclusive), {@code means} fp32 {@code [requests, C]}.
     */
    public void poolEmbedding(CudaStream stream, long slots, long weights, long bounds, long means, int requests,
                              int side, int channels) {
        require(requests > 0 && side > 0 && channels > 0, "poolEmbedding: " + requests + " requests of " + side + "x"
                + side + "x" + channels);
        // samstream_pool_embedding(embeddings, weights, bounds, out, side, channels)
        Pointer params = Pointer.to(Pointer.to(new long[] {slots}), Pointer.to(new long[] {weights}),
                Pointer.to(new long[] {bounds}), Pointer.to(new long[] {means}), Pointer.to(new int[] {side}),
                Pointer.to(new int[] {channels}));
        kernels.launchFunction(POOL, requests, 1, 1, THREADS, stream, params,
                () -> "launching " + POOL + " for " + requests + " masks");
    }

    /**
     * Each request's appearance map (one warp per cell, at most {@code cells} cells a map): {@code slots} the table of
     * slot addresses (u64 each), {@code looks} fp32 {@code [requests, 2 C]} (the remembered look, then the image's
     * mean), {@code dims} i32 {@code [requests, 4]} (cols, rows, window cols, window rows), {@code maps} fp32
     * {@code [requests, E*E]}.
     */
    public void cellSimilarity(CudaStream stream, long slots, long looks, long dims, long maps, int requests, int cells,
                               int side, int channels) {
        require(requests > 0 && requests <= 65535 && cells > 0 && side > 0 && channels > 0, "cellSimilarity: "
                + requests + " requests of " + cells + " cells of " + side + "x" + side + "x" + channels);
        int blocks = (cells + WARPS - 1) / WARPS;
        // samstream_cell_similarity(embeddings, refs, dims, out, side, channels)
        Pointer params = Pointer.to(Pointer.to(new long[] {slots}), Pointer.to(new long[] {looks}),
                Pointer.to(new long[] {dims}), Pointer.to(new long[] {maps}), Pointer.to(new int[] {side}),
                Pointer.to(new int[] {channels}));
        kernels.launchFunction(CELL_SIMILARITY, blocks, requests, 1, THREADS, stream, params,
                () -> "launching " + CELL_SIMILARITY + " for " + requests + " appearance maps");
    }

    /**
     * The mean cosine of the {@code cols x rows} image cells of {@code now} and {@code previous} (bf16 embeddings)
     * at each shift within {@code range} cells: {@code (2 range + 1)^2} fp32 scores (one block per shift).
     */
    public void matchShifts(CudaStream stream, long previous, long now, long scores, int side, int channels, int cols,
                            int rows, int range) {
        require(range > 0 && cols > 0 && rows > 0 && cols <= side && rows <= side && channels > 0, "matchShifts: "
                + cols + "x" + rows + " cells of " + side + "x" + side + "x" + channels + ", range " + range);
        int shifts = (2 * range + 1) * (2 * range + 1);
        // samstream_match_shifts(prev, now, scores, side, channels, cols, rows, range)
        Pointer params = Pointer.to(Pointer.to(new long[] {previous}), Pointer.to(new long[] {now}),
                Pointer.to(new long[] {scores}), Pointer.to(new int[] {side}), Pointer.to(new int[] {channels}),
                Pointer.to(new int[] {cols}), Pointer.to(new int[] {rows}), Pointer.to(new int[] {range}));
        kernels.launchFunction(MATCH_SHIFTS, shifts, 1, 1, THREADS, stream, params,
                () -> "launching " + MATCH_SHIFTS + " over " + cols + "x" + rows + " cells");
    }
}
