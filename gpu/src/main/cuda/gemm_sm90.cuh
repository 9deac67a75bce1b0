// Hopper (sm_90a) GEMM: C[M,N] = A[M,K] * W[N,K]^T (+ bias[N]) (-> GELU) (+ residual[M,N]), bf16 in and
// out, fp32 accumulation in the registers of warpgroup MMA (wgmma.mma_async). Same function, constraints
// and epilogue as gemm.cuh (the mma.sync kernel, which sm_80-89 keep), so the host can swap them.
//
// Why: wgmma reads both operands straight from shared memory and runs asynchronously, so one CTA of 384 threads
// per SM keeps the tensor cores busier than mma.sync (bench/results/README.md). The 128x256 tile's accumulators
// (64x256 per consumer warpgroup, 128 fp32 registers per thread) fit in the 168 registers a 384-thread CTA gets.
//
// The fallback of gemm_sm90_tma.cuh where tensor maps cannot be made: a producer warpgroup copies the tiles
// with 16-byte cp.async into the 128-byte-swizzled layout that wgmma's shared-memory descriptors describe.
// This file is the schedule (the kernel: warp roles, tile walk); PTX wrappers in gemm_sm90_ptx.cuh, the
// mainloop's pieces in gemm_sm90_mainloop.cuh, the epilogue in gemm_sm90_epilogue.cuh.
// Warp-specialised pipeline, STAGES slots, two mbarriers per slot:
//   producer (warpgroup 0, 128 threads): wait "empty[s]" -> cp.async tile kt into slot s -> commit; then
//     wait for its own tile kt-LAG (cp.async.wait_group LAG), fence.proxy.async (the copies were made
//     through the generic proxy, wgmma reads through the async proxy), arrive on "full[(kt-LAG)%S]".
//   consumers (warpgroups 1 and 2, 64 rows each): wait "full[s]" -> 4 wgmma k16 steps -> commit ->
//     wgmma.wait_group 1 (the previous tile's MMAs are done) -> arrive on "empty" of that tile's slot.
// LAG = STAGES - 2 keeps two tiles of copies in flight per producer thread while the consumers have
// one tile of MMAs in flight and one queued.
//
// Shared-memory layout of one operand tile (R rows x 64 bf16 = 128 B per row, 1024-byte aligned): row r
// at r * 128, its 16-byte chunk c at chunk (c ^ (r % 8)) (the 128B swizzle); 8-row groups are 1024 B
// apart (the descriptor's stride byte offset). A k16 step inside the 64-wide tile adds 32 B to the
// descriptor's start address (the swizzle is applied by the hardware on the absolute address bits).
//
// Accumulator layout of m64nNk16 (per warp w of the warpgroup, lane l): d[4j + 0..1] = rows 16w + l/4,
// columns 8j + 2(l%4) + 0..1; d[4j + 2..3] = the same 8 rows further down. The epilogue writes bf16x2
// pairs straight from there, exactly as gemm.cuh does.
//
// The kernel body exists only for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL); the other targets of the fatbin
// get a body that traps, and GemmKernels launches these kernels only on compute capability 9.0.
#pragma once

#include "common.cuh"
#include "gemm.cuh"
#include "gemm_sm90_epilogue.cuh"
#include "gemm_sm90_mainloop.cuh"
#include "gemm_sm90_ptx.cuh"

namespace gemm_sm90 {

template <int BM, int BN, int STAGES>
struct Config {
    static constexpr int THREADS = 384;                 // producer + 2 consumers
    static constexpr int MI = BM / 128;                 // m64 blocks per consumer warpgroup (BM / 2 rows each)
    static constexpr int A_BYTES = BM * BK * 2;         // one stage of A
    static constexpr int B_BYTES = BN * BK * 2;         // one stage of W
    static constexpr int TILE_BYTES = STAGES * (A_BYTES + B_BYTES);
    // + barriers (2 per stage) + slack to align the dynamic shared memory up to 1024 B
    static constexpr int SMEM_BYTES = TILE_BYTES + 2 * STAGES * 8 + 1024;
    static constexpr int LAG = STAGES - 2;
    static constexpr int ACC = BN / 2;                  // fp32 accumulators per consumer thread and m64 block
    // More than 168 accumulator-heavy registers per consumer thread: move registers from the producer.
    static constexpr bool REBALANCE = MI * ACC > 128;
    // Column tiles whose residual store_tile reads ahead: as many as the consumer's registers leave (ptxas: no
    // spills at 4 on every tile; 8 spills at 128x256).
    static constexpr int EPILOGUE_GROUP = 4;
    static_assert(STAGES >= 3, "the pipeline needs at least 3 stages");
    static_assert(BM == 128 || BM == 256, "two consumer warpgroups of 64 or 128 rows");
    static_assert(BN == 128 || BN == 192 || BN == 256, "wgmma tile widths 128, 192, 256");
    static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 CTA can have");
};

// Any 1-D grid: CTA b computes output tiles t = b, b + gridDim.x, ... (t -> row band t / n_tiles, column
// tile t % n_tiles: CTAs running together share A row bands). The host launches one CTA per tile (a
// persistent launch lost: bench/results/2026-11-30-h200-wgmma.md).
template <int BM, int BN, int STAGES>
__device__ __forceinline__ void gemm_bf16_sm90(const bf16* __restrict__ A, const bf16* __restrict__ W,
                                               const bf16* __restrict__ bias, const bf16* residual, bf16* C,
                                               int M, int N, int K, int epilogue) {
#ifdef SAMSTREAM_SM90A
    using Cfg = Config<BM, BN, STAGES>;
    constexpr int LAG = Cfg::LAG, ACC = Cfg::ACC, MI = Cfg::MI;

    extern __shared__ unsigned char smem_raw[];
    const Ring<STAGES, Cfg::A_BYTES, Cfg::B_BYTES> ring(smem_addr(smem_raw));   // A, W slots and the barriers

    const int tid = threadIdx.x, wg = tid / 128;
    const int k_tiles = (K + BK - 1) / BK;
    const int n_tiles = (N + BN - 1) / BN;
    const int tiles = ((M + BM - 1) / BM) * n_tiles;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(ring.full(s), 128);   // every producer thread arrives once per k tile
            mbar_init(ring.empty(s), 8);    // lane 0 of each consumer warp
        }
    }
    __syncthreads();

    if (wg == 0) {
        // ------------------------------------------------------------------ producer
        if constexpr (Cfg::REBALANCE) setmaxnreg_dec<40>();
        const int chunk = tid & 7;               // this thread's 16-byte chunk of every row it copies
        const int row0 = tid >> 3;               // rows row0, row0 + 16, ...
        const uint32_t swz = (uint32_t)((chunk ^ (row0 & 7)) * 16);   // row0 + 16 i has the same row % 8
        int g = 0;                               // k tiles issued by this CTA so far (all its output tiles)
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
            const int block_m = (t / n_tiles) * BM, block_n = (t % n_tiles) * BN;
            for (int kt = 0; kt < k_tiles; ++kt, ++g) {
                const int s = g % STAGES;
                if (g >= STAGES) mbar_wait(ring.empty(s), ((g / STAGES) + 1) & 1);
                // Few live registers (the producer may run on 40): one running source pointer per operand,
                // rows past M / N and columns past K zero-filled.
                load_k_tile<BM, BN>(ring.a(s), ring.b(s), A, W, M, N, K, block_m, block_n,
                                    kt, chunk, row0, swz);
                cp_async_commit();
                v1_complete_lagging_stage<LAG, STAGES>(g, ring.full(0));
            }
        }
        v1_complete_remaining_stages<LAG, STAGES>(g, ring.full(0));
        return;
    }

    // ---------------------------------------------------------------------- consumers
    if constexpr (Cfg::REBALANCE) setmaxnreg_inc<232>();
    const int cw = wg - 1;                          // consumer 0: rows 0 .. BM/2-1, 1: the rest
    const int warp = (tid >> 5) & 3, lane = tid & 31;
    const bool has_bias = (epilogue & gemm::BIAS) != 0, has_gelu = (epilogue & gemm::GELU) != 0,
               has_res = (epilogue & gemm::RESIDUAL) != 0;
    float acc[MI][ACC];
    int g = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int block_m = (t / n_tiles) * BM, block_n = (t % n_tiles) * BN;
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int i = 0; i < ACC; ++i) acc[mi][i] = 0.f;

        for (int kt = 0; kt < k_tiles; ++kt, ++g) {
            const int s = g % STAGES;
            mbar_wait(ring.full(s), (g / STAGES) & 1);
            mma_k_tile<BN>(acc, ring.a(s) + cw * (BM / 2) * 128, ring.b(s));
            if (kt > 0 && lane == 0) mbar_arrive(ring.empty((g - 1) % STAGES));
        }
        wgmma_wait<0>();
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
        if (lane == 0) mbar_arrive(ring.empty((g - 1) % STAGES));   // the tile's last slot: free for the producer

        store_tile<BM, BN, Cfg::EPILOGUE_GROUP>(acc, bias, residual, C, M, N, block_m, cw * (BM / 2), block_n, warp, lane, has_bias,
                           has_gelu, has_res);
    }
#else
    __trap();   // not an sm_90a build: the host never launches this kernel here
#endif
}

}  // namespace gemm_sm90
