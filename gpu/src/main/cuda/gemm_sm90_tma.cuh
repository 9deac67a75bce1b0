// Hopper (sm_90a) GEMM fed by the tensor memory accelerator, the GEMM of sm_90: the function, tiles, shared-memory
// layout, MMAs and epilogue of gemm_sm90.cuh, with the tiles copied by TMA (cp.async.bulk.tensor) instead of 128
// producer threads issuing 16-byte cp.async (GemmTile.HTS..., HTP128x128; only TMA_STORE is instantiated; the
// two-CTA cluster with a multicast W tile lost and was removed: bench/results/README.md). This file is the
// schedule (the kernel: warp roles, persistent tile walk, barriers); PTX wrappers in gemm_sm90_tma_ptx.cuh, the
// mainloop's MMAs in gemm_sm90_mainloop.cuh, the epilogue in gemm_sm90_tma_epilogue.cuh.
//
// Why: one thread issues two
// bulk tensor copies per k tile (A: 128 x 64, W: BN x 64), the hardware writes them in the 128-byte-swizzled layout
// that the wgmma descriptors read (CU_TENSOR_MAP_SWIZZLE_128B on a 64-element-wide box: row r's 16-byte chunk c at
// chunk c ^ (r % 8), exactly gemm_sm90's layout), fills rows past M / N and columns past K with zeros, and
// completes the stage's full-barrier by transaction count. The kernel is persistent (grid <= SMs, one CTA per SM
// by its shared memory): the producer runs up to STAGES k tiles ahead, across output tiles, so the next tile's
// operands are in shared memory while the consumers are in the epilogue.
//
// The tensor maps are made on the host (io.samstream.gpu.cuda.TensorMaps: cuTensorMapEncodeTiled through JNA,
// since JCuda 12.6 has no binding for it) and passed by value as __grid_constant__ kernel parameters:
//   A [M, K] bf16 row-major: dims {K, M}, row stride 2K bytes, box {64, 128};
//   W [N, K] bf16 row-major: dims {K, N}, row stride 2K bytes, box {64, BN}.
//
// Synchronisation (g = the CTA's running k-tile counter over all its output tiles, s = g % STAGES, u = g / STAGES):
//   full[s]  init count 1: the producer's arrive.expect_tx(STAGE_BYTES) for use u; the phase completes when that
//            arrival and all STAGE_BYTES of both copies have landed. Waiters: every consumer thread, parity u & 1.
//   empty[s] init count 8: lane 0 of each consumer warp after wgmma.wait_group shows its MMAs on use u are done.
//            Waiter: the producer thread before reusing slot s for use u (g >= STAGES), parity (u - 1) & 1.
// The consumers' side is gemm_sm90's v1 consumer unchanged. No proxy fence is needed: TMA writes and wgmma reads
// are both async-proxy operations, ordered by the mbarriers.
//
// The kernel body exists only for sm_90a; other targets of the fatbin get a body that traps, and GemmKernels
// launches these kernels only on compute capability 9.0 and only with tensor maps it could encode.
#pragma once

#include <cuda.h>   // CUtensorMap

#include "gemm_fp8_sm90_blockscale.cuh"
#include "gemm_fp8_sm90_epilogue.cuh"
#include "gemm_fp8_sm90_mainloop.cuh"
#include "gemm_sm90.cuh"
#include "gemm_sm90_tma_epilogue.cuh"
#include "gemm_sm90_tma_ptx.cuh"

namespace gemm_sm90_tma {

using gemm_sm90::BK;
constexpr int BM = 128;   // two consumer warpgroups of 64 rows

template <int BN, int STAGES, bool TMA_STORE = false, bool PINGPONG = false>
struct Config {
    static constexpr int THREADS = 384;                 // producer warpgroup (one thread issues) + 2 consumers
    static constexpr int A_BYTES = BM * BK * 2;         // one stage of A
    static constexpr int B_BYTES = BN * BK * 2;         // one stage of W
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int TILE_BYTES = STAGES * STAGE_BYTES;
    // TMA_STORE: each consumer warpgroup stages 64 x 128 of C (two 64 x 64 boxes of 8 KB) for its TMA stores, in
    // 1024-aligned shared memory past the barriers (the 128-byte swizzle repeats every 1024 B).
    static constexpr int BOX_BYTES = 64 * 64 * 2;
    static constexpr int OUT_OFFSET = TILE_BYTES + 1024;   // from the ring's base: tiles, barriers, padding
    static constexpr int OUT_BYTES = TMA_STORE ? 2 * 2 * BOX_BYTES : 0;
    // Same formula as v1 (GemmKernels.GemmTile mirrors it): tiles + 2 barriers per stage + 1024 B alignment slack;
    // with TMA stores: tiles + 1024 (barriers, padded) + the staging buffers + 1024 B slack.
    static constexpr int SMEM_BYTES =
        TMA_STORE ? OUT_OFFSET + OUT_BYTES + 1024 : TILE_BYTES + 2 * STAGES * 8 + 1024;
    static constexpr int ACC = BN / 2;
    // PINGPONG: each consumer warpgroup owns a whole BM x BN tile (two 64-row slices); cooperative: 64 rows of one.
    static constexpr int MI = PINGPONG ? 2 : 1;
    // 128 accumulators per consumer thread (BN = 256, or a ping-pong 128 x 128) leave too few of the 168 launch
    // registers for the epilogue: the producer warpgroup (one thread works) gives its registers to the consumers, as
    // in gemm_sm90's REBALANCE.
    static constexpr bool REBALANCE = ACC * MI > 64;
    // Residual read-ahead of the epilogue (column tiles per group): with the producer's registers the consumers have
    // room for 16 (BN = 256); 128x128 runs on the launch registers.
    static constexpr int EPILOGUE_GROUP = REBALANCE ? 16 : 8;
    static_assert(BN == 128 || BN == 256, "wgmma tile widths 128 and 256");
    static_assert(!PINGPONG || (TMA_STORE && BN == 128), "ping-pong consumers: 128 x 128 tiles with TMA stores");
    // full[STAGES], empty[STAGES], and with PINGPONG the two consumers' turn barriers
    static constexpr int BARRIERS = 2 * STAGES + (PINGPONG ? 2 : 0);
    static_assert(BARRIERS * 8 <= 1024, "the barriers fit in the padding before the staging buffers");
    static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 CTA can have");
};

// map_a / map_w must be references to __grid_constant__ kernel parameters (TMA reads them where they are).
//
// Any 1-D grid: CTA b computes output tiles t = b, b + gridDim.x, ... (row band t / n_tiles, column tile
// t % n_tiles); the host launches min(tiles, SMs) CTAs. tools/hopper_pipeline_model.py checks the barrier protocol.
//
// TMA_STORE: C is written through map_c (dims {N, M}, box 64 x 64, the 128-byte swizzle) by
// stage_and_store_tile instead of store_tile; C is then only where map_c points.
//
// PINGPONG (TMA_STORE, BN = 128): the consumer warpgroups take turns instead of sharing each tile. Cooperative, both
// compute 64 rows of the same tile and reach its epilogue together, so the tensor cores idle for every epilogue
// (at K = 768, 12 k tiles, a large share of the rate: bench/results/README.md). Ping-pong, warpgroup c computes
// the whole 128 x 128 of the CTA's tiles i = c, c + 2, ... (two m64n128 slices, 128 accumulators per thread) and
// the other one runs its mainloop while c is in the epilogue. The producer and the ring are unchanged: tile i's k
// tiles are still g = i k_tiles .. (i + 1) k_tiles - 1, in order. The turns are what make that safe, not only
// faster: a consumer waiting on full[s] for use u must know use u - 1 has completed, or the parity wait would see
// u - 2's completion and read a stage that is not there yet. So warpgroup c starts tile i's mainloop only after
// the other one has waited out every full barrier of tile i - 1 (turn[c], count 1: the other's arrival after its
// last k tile's MMAs are issued); every k tile before tile i has then been waited on by someone, and tile i's own
// ones by c, in order. turn[c] completes once per tile of the other warpgroup, and the other cannot arrive twice
// before c has waited (it waits on turn[c ^ 1] in between). empty[s] then counts the 4 warps of one warpgroup.
//
// E4M3 (TMA_STORE only): A and W are e4m3 (FP8) with per-row scales a_scale[M] and per-output-channel scales
// w_scale[N] (fp32); their maps are u8 with boxes of 128 elements (128 bytes, the same swizzle atom), a k tile is 128
// elements (gemm_fp8_sm90_mainloop.cuh), and the accumulators are dequantized before the epilogue
// (gemm_fp8_sm90_epilogue.cuh). Everything else - ring, barriers, tile walk, epilogue - is the bf16 kernel's.
//
// FP8 (E4M3 only; gemm_fp8_sm90_blockscale.cuh): FP8_ROW_IN the above; FP8_E4M3_OUT the same mainloop, and the epilogue
// writes e4m3 through map_c (u8 [M, N], box 128 x 64) with one scale per (row, 128 columns) in out_scale [M, N / 128]
// instead of bf16 (mlp.lin1, N % 128 == 0, no residual); FP8_BLOCK_IN: a_scale is [M, K / 128], one scale per row and
// k tile, applied per k tile in the mainloop (mlp.lin2 reading lin1's output; BN = 128), w_scale in the epilogue.
constexpr int FP8_ROW_IN = 0, FP8_E4M3_OUT = 1, FP8_BLOCK_IN = 2;
template <int BN, int STAGES, bool TMA_STORE = false, bool PINGPONG = false, bool E4M3 = false, int FP8 = FP8_ROW_IN>
__device__ __forceinline__ void gemm_bf16_sm90_tma(const CUtensorMap& map_a, const CUtensorMap& map_w,
                                                   const CUtensorMap* map_c, const bf16* __restrict__ bias,
                                                   const bf16* residual, bf16* C, int M, int N, int K, int epilogue,
                                                   const float* a_scale = nullptr, const float* w_scale = nullptr,
                                                   float* out_scale = nullptr) {
#ifdef SAMSTREAM_SM90A
    using namespace gemm_sm90;
    using Cfg = Config<BN, STAGES, TMA_STORE, PINGPONG>;
    constexpr int ACC = Cfg::ACC, MI = Cfg::MI;
    constexpr int KT = E4M3 ? BK_E4M3 : BK;   // elements of k per k tile (128 bytes a row either way)
    static_assert(!E4M3 || TMA_STORE, "the e4m3 GEMM stores by TMA");
    static_assert(FP8 == FP8_ROW_IN || E4M3, "block scales are for the e4m3 GEMM");
    static_assert(FP8 != FP8_BLOCK_IN || BN == 128, "block-scaled mainloop: 128-wide tiles (the temporary fragment)");
    constexpr bool BLOCK_IN = FP8 == FP8_BLOCK_IN;

    extern __shared__ unsigned char smem_raw[];
    const Ring<STAGES, Cfg::A_BYTES, Cfg::B_BYTES> ring(smem_addr(smem_raw));   // A, W slots and the barriers

    const int tid = threadIdx.x, wg = tid / 128;
    const int k_tiles = (K + KT - 1) / KT;
    const int n_tiles = (N + BN - 1) / BN;
    const int tiles = ((M + BM - 1) / BM) * n_tiles;
    const int first = blockIdx.x, step = gridDim.x;   // this CTA's tiles: first, + step, ...
    auto turn = [&](int c) { return ring.full(2 * STAGES + c); };        // PINGPONG: consumer c may start a mainloop

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(ring.full(s), 1);   // the producer's arrive.expect_tx, then the bytes
            // lane 0 of each warp that reads the slot: both consumer warpgroups, or the one ping-pong warpgroup
            // whose tile it is
            mbar_init(ring.empty(s), PINGPONG ? 4 : 8);
        }
        if constexpr (PINGPONG) {
            mbar_init(turn(0), 1);
            mbar_init(turn(1), 1);
        }
    }
    __syncthreads();

    if (wg == 0) {
        // ------------------------------------------------------------------ producer: one thread
        if constexpr (Cfg::REBALANCE) setmaxnreg_dec<40>();
        if (tid == 0) {
            prefetch_tensormap(map_a);
            prefetch_tensormap(map_w);
            int g = 0;
            for (int t = first; t < tiles; t += step) {
                const int block_m = (t / n_tiles) * BM, block_n = (t % n_tiles) * BN;
                for (int kt = 0; kt < k_tiles; ++kt, ++g) {
                    const int s = g % STAGES;
                    if (g >= STAGES) mbar_wait(ring.empty(s), ((g / STAGES) + 1) & 1);
                    mbar_arrive_expect_tx(ring.full(s), Cfg::STAGE_BYTES);
                    tma_load_2d(ring.a(s), map_a, kt * KT, block_m, ring.full(s));
                    tma_load_2d(ring.b(s), map_w, kt * KT, block_n, ring.full(s));
                }
            }
        }
        // The bulk copies in flight complete on the barriers, which the consumers wait for.
        return;
    }

    // ---------------------------------------------------------------------- consumers (gemm_sm90's)
    if constexpr (Cfg::REBALANCE) setmaxnreg_inc<232>();
    const int cw = wg - 1;                          // consumer 0: rows 0 .. 63, 1: 64 .. 127
    const int warp = (tid >> 5) & 3, lane = tid & 31;
    const uint32_t out = ring.a(0) + Cfg::OUT_OFFSET + cw * 2 * Cfg::BOX_BYTES;   // TMA_STORE: staging buffer
    if constexpr (TMA_STORE) {
        if (warp == 0 && lane == 0) prefetch_tensormap(*map_c);
    }
    const bool has_bias = (epilogue & gemm::BIAS) != 0, has_gelu = (epilogue & gemm::GELU) != 0,
               has_res = (epilogue & gemm::RESIDUAL) != 0;
    auto release = [&](int s) { mbar_arrive(ring.empty(s)); };   // a consumed slot, free for the producer
    float acc[MI][ACC];
    [[maybe_unused]] float tmp[BLOCK_IN ? ACC : 1];   // FP8_BLOCK_IN: one k tile of one 64-row slice
    const int kb = (K + KT - 1) / KT;                  // FP8_BLOCK_IN: a_scale's columns (k tiles)
    // This warpgroup's tiles, as indices i into the CTA's sequence first, + step, ...: all of them (cooperative: rows
    // cw * 64 .. of each), or every other one from i = cw (ping-pong: whole tiles).
    constexpr int PER = PINGPONG ? 2 : 1;
    for (int i = PINGPONG ? cw : 0, t = first + i * step; t < tiles; i += PER, t += PER * step) {
        const int block_m = (t / n_tiles) * BM, block_n = (t % n_tiles) * BN;
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int j = 0; j < ACC; ++j) acc[mi][j] = 0.f;
        if constexpr (PINGPONG) {
            if (i > 0) mbar_wait(turn(cw), ((i - 1) / 2) & 1);   // the other warpgroup has waited out tile i - 1
        }

        int g = i * k_tiles;   // the CTA's running k-tile counter at this tile's first k tile
        for (int kt = 0; kt < k_tiles; ++kt, ++g) {
            const int s = g % STAGES;
            if constexpr (BLOCK_IN) {
                // scales first (their loads overlap the barrier wait), then the k tile, waited for: release it now
                float sc[MI][2];
                load_block_scales<MI>(sc, a_scale, M, kb, kt, block_m + (PINGPONG ? 0 : cw * 64), 64, warp, lane);
                mbar_wait(ring.full(s), (g / STAGES) & 1);
                mma_k_tile_e4m3_blockscaled<BN>(acc, tmp, ring.a(s) + (PINGPONG ? 0 : cw * 64 * 128), ring.b(s), sc);
                if (lane == 0) release(s);
                continue;
            }
            mbar_wait(ring.full(s), (g / STAGES) & 1);
            if constexpr (E4M3) {
                mma_k_tile_e4m3<BN>(acc, ring.a(s) + (PINGPONG ? 0 : cw * 64 * 128), ring.b(s));
            } else {
                mma_k_tile<BN>(acc, ring.a(s) + (PINGPONG ? 0 : cw * 64 * 128), ring.b(s));
            }
            if (kt > 0 && lane == 0) release((g - 1) % STAGES);
        }
        if constexpr (PINGPONG) {
            if (warp == 0 && lane == 0) mbar_arrive(turn(cw ^ 1));   // its turn, while these MMAs drain
        }
        wgmma_wait<0>();
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
        if (!BLOCK_IN && lane == 0) release((g - 1) % STAGES);   // the tile's last slot: free for the producer

        if constexpr (TMA_STORE) {
#pragma unroll
            for (int mi = 0; mi < MI; ++mi) {
                if constexpr (FP8 == FP8_BLOCK_IN) {
                    scale_columns<BN>(acc[mi], w_scale, N, block_n, lane);
                } else if constexpr (E4M3) {
                    dequantize_accumulators<BN>(acc[mi], a_scale, w_scale, M, N, block_m + (PINGPONG ? mi : cw) * 64,
                                                block_n, warp, lane);
                }
                if constexpr (FP8 == FP8_E4M3_OUT) {
                    stage_and_store_tile_e4m3<BN>(acc[mi], bias, out_scale, *map_c, out, M, N,
                                                  block_m + (PINGPONG ? mi : cw) * 64, block_n, 1 + cw, warp, lane,
                                                  has_bias, has_gelu);
                } else {
                    stage_and_store_tile<BN, Cfg::EPILOGUE_GROUP>(acc[mi], bias, residual, *map_c, out, M, N,
                                                                  block_m + (PINGPONG ? mi : cw) * 64, block_n, 1 + cw,
                                                                  warp, lane, has_bias, has_gelu, has_res);
                }
            }
        } else {
            store_tile<BM, BN, Cfg::EPILOGUE_GROUP>(acc, bias, residual, C, M, N, block_m, cw * 64, block_n, warp,
                                                    lane, has_bias, has_gelu, has_res);
        }
    }
    if constexpr (TMA_STORE) {
        if (warp == 0 && lane == 0) bulk_wait_group<0>();   // shared memory stays until the last store is done
    }
#else
    __trap();   // not an sm_90a build: the host never launches this kernel here
#endif
}

}  // namespace gemm_sm90_tma
