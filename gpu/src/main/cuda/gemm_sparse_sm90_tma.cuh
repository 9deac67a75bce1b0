// Hopper (sm_90a) 2:4-sparse GEMM fed and drained by the tensor memory accelerator: the function of
// gemm_sparse_sm90.cuh (C = A . W^T (+bias) (GELU) (+residual), W pruned to 2:4 along K, given as TwoFourWeights'
// compressed values + metadata) with the pipeline of gemm_sm90_tma.cuh (one producer thread issuing bulk tensor
// copies, persistent CTAs, C written by TMA stores, optionally ping-pong consumers).
//
// Why. The cp.async sparse kernel (gemm_sparse_sm90.cuh) is slower than the dense TMA GEMM, so 2:4 made the encoder
// slower, not faster (bench/results/2026-12-01-h200-sparse-wgmma.md): it has the design the dense GEMM left behind,
// 128 producer threads issuing 16-byte copies and waiting for them, register stores of
// C with a shuffle per pair, and the tensor cores idle for every epilogue. Here the sparse instruction is the same
// (wgmma.mma_async.sp m64n128k32, W as the sparse A operand, so the CTA computes C^T tiles), and everything around it
// is the dense TMA kernel's.
//
// One stage = 128 dense k of a 128 (weight rows) x 128 (activation rows) tile, four TMA boxes completing one
// full-barrier by transaction count:
//   W values   [np, kp/2] bf16, box 64 x 128 rows, 128B swizzle: 16 KB, one swizzle atom per weight row;
//   activations [M, K] bf16, two boxes 64 x 128 rows (k 0..63 and 64..127 of the stage), 128B swizzle: 32 KB;
//   metadata   [np/16, kp/2] u32 (row b = the words of 16-row block b, 16 per k32 step), box 64 x 8, no swizzle:
//              2 KB, block b's 4 steps at b * 256 B — the layout the cp.async kernel builds by hand.
// TMA fills whatever lies past M, N or K with zeros (metadata zero is then replaced by a valid code, as there), so
// ragged shapes need no special case. Three stages (150 KB) leave room for the staging buffers.
//
// Epilogue. The accumulators hold C^T (acc[4j + 2h + e] = C[m = 8j + 2q + e][n = 16 warp + g + 8h] of the consumer's
// 64 weight rows), so C is transposed on its way through shared memory: stmatrix .trans writes each 8 x 8 fragment as
// 8 rows of C (one activation row, 8 consecutive weight rows = 16 bytes) into staging boxes of 64 x 64 (C's
// 128-byte-swizzled box layout, conflict-free), which TMA stores. The residual comes the same way in reverse: the
// consumer's issuing thread starts a TMA load of the residual tile into its staging buffer when the tile's mainloop
// begins (so it lands while the MMAs run), and ldmatrix .trans reads it back in the accumulators' layout. Every
// element of the tile is read before the tile's store is issued, so the residual may alias C (x += f(x)).
//
// Synchronisation: gemm_sm90_tma.cuh's full / empty ring and ping-pong turns (same protocol, model-checked by
// tools/hopper_pipeline_model.py), plus one barrier per consumer warpgroup for its residual (count 1: the issuer's
// arrive.expect_tx; waited by the warpgroup before its epilogue, parity = the warpgroup's tile count & 1). The
// staging buffer is reused only after the issuer's cp.async.bulk.wait_group.read of the previous tile's stores.
//
// Metadata registers: wgmma.sp reads its metadata register while the MMA runs and ptxas does not protect it, so the
// k tiles alternate between two register sets, each kept live until the wait that retires its group, and are taken
// in branch-free pairs (gemm_sparse_sm90.cuh says why; an odd count gets a zero k tile).
//
// Compiled for sm_90a only (a trapping body elsewhere); launched on compute capability 9.0 with tensor maps encoded by
// io.samstream.gpu.cuda.TensorMaps (SparseGemmKernels.run).
#pragma once

#include <cuda.h>   // CUtensorMap

#include "gemm_sm90_tma.cuh"
#include "gemm_sparse_sm90.cuh"
#include "gemm_sparse_sm90_tma_epilogue.cuh"

namespace gemm_sparse_sm90_tma {

using gemm_sparse_sm90::BA;    // activation rows per CTA tile (the wgmma N)
using gemm_sparse_sm90::BKD;   // dense k per stage
using gemm_sparse_sm90::BW;    // weight rows per CTA tile

template <bool PINGPONG>
struct Config {
    static constexpr int THREADS = 384;                  // producer warpgroup (one thread issues) + 2 consumers
    static constexpr int STAGES = 3;
    static constexpr int W_BYTES = BW * 128;             // compressed values: 64 per weight row
    static constexpr int A_BYTES = 2 * BA * 128;         // activations: two boxes of 64 k
    static constexpr int E_BYTES = BW / 16 * 4 * 64;     // metadata: 8 blocks x 4 k32 steps x 16 words
    static constexpr int STAGE_BYTES = W_BYTES + A_BYTES + E_BYTES;   // 50 KB: stages stay 1024-aligned
    static constexpr int RING_BYTES = STAGES * STAGE_BYTES;
    // m64 weight blocks per consumer: ping-pong, the whole 128 x 128 tile (two); cooperative, its 64 rows of it.
    static constexpr int MI = PINGPONG ? 2 : 1;
    static constexpr int BOX_BYTES = 64 * 64 * 2;        // one 64 x 64 box of C
    // Per consumer warpgroup: its whole share of the tile, MI x 2 boxes (64 weight rows x 128 activation rows each).
    static constexpr int OUT_BYTES = MI * 2 * BOX_BYTES;
    static constexpr int OUT_OFFSET = RING_BYTES + 1024;  // from the aligned base: ring, barriers (padded)
    static constexpr int SMEM_BYTES = OUT_OFFSET + 2 * OUT_BYTES + 1024;   // + alignment slack
    // full[STAGES], empty[STAGES], turn[2] (ping-pong), residual[2]
    static constexpr int BARRIERS = 2 * STAGES + 4;
    // 128 accumulators a thread (ping-pong) need the producer warpgroup's registers.
    static constexpr bool REBALANCE = PINGPONG;
    static_assert(STAGE_BYTES % 1024 == 0, "stages keep the 128-byte swizzle's 1024-byte alignment");
    static_assert(BARRIERS * 8 <= 1024, "the barriers fit in the padding before the staging buffers");
    static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 CTA can have");
};

// map_a, map_v, map_e, map_c, map_r must be references to __grid_constant__ kernel parameters: A [M, K] (box 64 x
// 128), W's values [np, kp/2] (box 64 x 128), W's metadata [np/16, kp/2] u32 (box 64 x 8, no swizzle), C [M, N] and
// the residual [M, N] (boxes 64 x 64; map_r is any valid map when there is no residual). 1-D persistent grid, CTA b
// walking output tiles b, b + gridDim.x, ... (activation band t / w_tiles, weight band t % w_tiles).
template <bool PINGPONG>
__device__ __forceinline__ void gemm_sparse_bf16_sm90_tma(const CUtensorMap& map_a, const CUtensorMap& map_v,
                                                          const CUtensorMap& map_e, const CUtensorMap& map_c,
                                                          const CUtensorMap& map_r, const bf16* __restrict__ bias,
                                                          int M, int N, int K, int epilogue) {
#ifdef SAMSTREAM_SM90A
    using namespace gemm_sm90;
    using gemm_sm90_tma::bulk_commit_group, gemm_sm90_tma::bulk_wait_group, gemm_sm90_tma::bulk_wait_group_read,
        gemm_sm90_tma::mbar_arrive_expect_tx, gemm_sm90_tma::prefetch_tensormap, gemm_sm90_tma::tma_load_2d,
        gemm_sm90_tma::tma_store_2d, gemm_sm90_tma::warpgroup_sync;
    using Cfg = gemm_sparse_sm90_tma::Config<PINGPONG>;
    constexpr int STAGES = Cfg::STAGES, MI = Cfg::MI;

    extern __shared__ unsigned char smem_raw[];
    const uint32_t raw = smem_addr(smem_raw);
    const uint32_t base = (raw + 1023) & ~1023u;
    auto slot_w = [&](int s) { return base + s * Cfg::STAGE_BYTES; };
    auto slot_a = [&](int s) { return slot_w(s) + Cfg::W_BYTES; };
    auto slot_e = [&](int s) { return slot_a(s) + Cfg::A_BYTES; };
    const uint32_t bars = base + Cfg::RING_BYTES;
    auto full = [&](int s) { return bars + 8 * s; };
    auto empty = [&](int s) { return bars + 8 * (STAGES + s); };
    auto turn = [&](int c) { return bars + 8 * (2 * STAGES + c); };        // PINGPONG: consumer c may start a mainloop
    auto res_full = [&](int c) { return bars + 8 * (2 * STAGES + 2 + c); };   // consumer c's residual tile landed

    const int kp = (K + 63) & ~63;
    const int k_tiles = ((kp + BKD - 1) / BKD + 1) & ~1;   // even: the consumers take them in pairs
    const int w_tiles = (N + BW - 1) / BW;
    const int tiles = ((M + BA - 1) / BA) * w_tiles;
    const int tid = threadIdx.x, wg = tid / 128;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), 1);                   // the producer's arrive.expect_tx, then the bytes
            mbar_init(empty(s), PINGPONG ? 4 : 8);   // lane 0 of each warp that reads the slot
        }
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            mbar_init(turn(c), 1);
            mbar_init(res_full(c), 1);
        }
    }
    __syncthreads();

    if (wg == 0) {
        // ------------------------------------------------------------------ producer: one thread
        if constexpr (Cfg::REBALANCE) setmaxnreg_dec<40>();
        if (tid == 0) {
            prefetch_tensormap(map_a);
            prefetch_tensormap(map_v);
            prefetch_tensormap(map_e);
            int g = 0;
            for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
                const int block_a = (t / w_tiles) * BA, block_w = (t % w_tiles) * BW;
                for (int kt = 0; kt < k_tiles; ++kt, ++g) {
                    const int s = g % STAGES;
                    if (g >= STAGES) mbar_wait(empty(s), ((g / STAGES) + 1) & 1);
                    mbar_arrive_expect_tx(full(s), Cfg::STAGE_BYTES);
                    tma_load_2d(slot_w(s), map_v, kt * (BKD / 2), block_w, full(s));
                    tma_load_2d(slot_a(s), map_a, kt * BKD, block_a, full(s));
                    tma_load_2d(slot_a(s) + BA * 128, map_a, kt * BKD + 64, block_a, full(s));
                    tma_load_2d(slot_e(s), map_e, kt * (BKD / 2), block_w / 16, full(s));
                }
            }
        }
        return;
    }

    // ---------------------------------------------------------------------- consumers
    if constexpr (Cfg::REBALANCE) setmaxnreg_inc<232>();
    const int cw = wg - 1, warp = (tid >> 5) & 3, lane = tid & 31;
    const bool issuer = warp == 0 && lane == 0;
    const uint32_t out = base + Cfg::OUT_OFFSET + cw * Cfg::OUT_BYTES;   // this warpgroup's staging buffer
    const bool has_bias = (epilogue & gemm::BIAS) != 0, has_gelu = (epilogue & gemm::GELU) != 0,
               has_res = (epilogue & gemm::RESIDUAL) != 0;
    if (issuer) {
        prefetch_tensormap(map_c);
        if (has_res) prefetch_tensormap(map_r);
    }
    // Block mi's weight rows within the CTA tile: ping-pong, 64 mi (the warpgroup owns both); cooperative, 64 cw.
    auto block_row = [&](int mi) { return (PINGPONG ? mi : cw) * 64; };
    // This lane's metadata word of each k32 step kk (+ 16 kk): block (block_row / 16 + warp), as gemm_sparse_sm90.cuh.
    auto e_word = [&](int mi) { return (block_row(mi) / 16 + warp) * 64 + 2 * (lane >> 2) + (lane & 1); };

    float acc[MI][64];
    uint32_t e_even[MI][4], e_odd[MI][4];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) e_even[mi][kk] = e_odd[mi][kk] = 0u;
    auto pin = [&](const uint32_t(&e)[MI][4]) {
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) keep_in_registers(e[mi], M, base);   // M > 0: checked on the host
    };
    int g = 0;
    // One k tile (stage g) with metadata set `e`; `retired`, the other set, belongs to the tile whose MMAs the wait
    // below retires. First says whether this is the output tile's first k tile (whose predecessor was released at
    // the end of the previous tile).
    auto k_tile = [&](bool first, uint32_t(&e)[MI][4], uint32_t(&retired)[MI][4]) {
        const int s = g % STAGES;
        mbar_wait(full(s), (g / STAGES) & 1);
        const uint64_t da0 = smem_desc(slot_a(s)), da1 = smem_desc(slot_a(s) + BA * 128);
        const uint32_t* es = reinterpret_cast<const uint32_t*>(smem_raw + (slot_e(s) - raw));
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {
                const uint32_t v = es[e_word(mi) + 16 * kk];
                e[mi][kk] = v != 0u ? v : 0x44444444u;   // zero-filled past N or K: a valid code on zero values
            }
        wgmma_fence();
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
#pragma unroll
            for (int mi = 0; mi < MI; ++mi)
                gemm_sparse_sm90::wgmma_sp_m64n128k32(acc[mi], smem_desc(slot_w(s) + block_row(mi) * 128) + 2 * kk,
                                                      (kk < 2 ? da0 : da1) + 4 * (kk & 1), e[mi][kk]);
        wgmma_commit();
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
        wgmma_wait<1>();
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
        pin(retired);   // the previous k tile's MMAs are done: its metadata registers may be reused from here
        if (!first && lane == 0) mbar_arrive(empty((g - 1) % STAGES));
        ++g;
    };

    constexpr int PER = PINGPONG ? 2 : 1;
    int done = 0;   // this warpgroup's tiles so far: the parity of its residual barrier
    for (int i = PINGPONG ? cw : 0, t = blockIdx.x + i * gridDim.x; t < tiles; i += PER, t += PER * gridDim.x, ++done) {
        const int block_a = (t / w_tiles) * BA, block_w = (t % w_tiles) * BW;
        // The residual tile into the staging buffer, once the previous tile's stores have read it; it lands while
        // the MMAs below run.
        if (has_res && issuer) {
            bulk_wait_group_read<0>();
            mbar_arrive_expect_tx(res_full(cw), Cfg::OUT_BYTES);
#pragma unroll
            for (int mi = 0; mi < MI; ++mi)
#pragma unroll
                for (int mb = 0; mb < 2; ++mb)
                    tma_load_2d(out + (2 * mi + mb) * Cfg::BOX_BYTES, map_r, block_w + block_row(mi), block_a + 64 * mb,
                                res_full(cw));
        }
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int j = 0; j < 64; ++j) acc[mi][j] = 0.f;
        if constexpr (PINGPONG) {
            if (i > 0) mbar_wait(turn(cw), ((i - 1) / 2) & 1);   // the other warpgroup has waited out tile i - 1
        }

        g = i * k_tiles;   // the CTA's running k-tile counter at this tile's first k tile
        // In pairs, with no branch between them (see the header).
        for (int kt = 0; kt < k_tiles; kt += 2) {
            k_tile(kt == 0, e_even, e_odd);
            k_tile(false, e_odd, e_even);
        }
        if constexpr (PINGPONG) {
            if (warp == 0 && lane == 0) mbar_arrive(turn(cw ^ 1));   // its turn, while these MMAs drain
        }
        wgmma_wait<0>();
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
        pin(e_even);
        pin(e_odd);
        if (lane == 0) mbar_arrive(empty((g - 1) % STAGES));   // the tile's last slot: free for the producer

        // ---- epilogue: through the staging buffer, then TMA stores the warpgroup goes on without waiting for
        if (has_res) {
            mbar_wait(res_full(cw), done & 1);   // (its issue came after the previous stores had read the buffer)
        } else {
            if (issuer) bulk_wait_group_read<0>();   // the previous stores out of this buffer have read it
            warpgroup_sync(1 + cw);
        }
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
            stage_block(acc[mi], out + 2 * mi * Cfg::BOX_BYTES, bias, N, block_w + block_row(mi), warp, lane, has_bias,
                        has_gelu, has_res);
        fence_proxy_async();   // this thread's staged values, visible to the TMA unit
        warpgroup_sync(1 + cw);
        if (issuer) {
#pragma unroll
            for (int mi = 0; mi < MI; ++mi)
#pragma unroll
                for (int mb = 0; mb < 2; ++mb) {
                    const int n0 = block_w + block_row(mi), m0 = block_a + 64 * mb;
                    if (n0 < N && m0 < M) tma_store_2d(map_c, out + (2 * mi + mb) * Cfg::BOX_BYTES, n0, m0);
                }
            bulk_commit_group();
        }
    }
    if (issuer) bulk_wait_group<0>();   // shared memory stays until the last store is done
#else
    __trap();   // not an sm_90a build: the host never launches this kernel here
#endif
}

}  // namespace gemm_sparse_sm90_tma
