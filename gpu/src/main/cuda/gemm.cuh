// C[M,N] = A[M,K] * W[N,K]^T (+ bias[N]) (-> GELU) (+ residual[M,N]), bf16 in and out, fp32 accumulation.
//
// W is a PyTorch Linear weight as stored ([out_features, in_features], row-major), so both operands
// are K-contiguous: exactly the "row.col" layout of mma.sync, loaded with plain (non-transposed)
// ldmatrix. One CTA computes a BM x BN tile of C; its warps split it into WM x WN warp tiles; K is
// walked BK (32 or 64) at a time through a STAGES-deep cp.async ring so that loads of tile
// k+STAGES-1 overlap the tensor-core work on tile k.
//
// Constraints (checked on the host): K % 8 == 0 and N % 8 == 0 (16-byte rows for cp.async, bf16x2
// stores), pointers 16-byte aligned. M, N and K need not be multiples of the tile: rows past M or N
// and columns past K are zero-filled on load and never stored.
//
// Epilogue (gemm_epilogue.cuh), in this order: + bias, exact GELU (erf), + residual. `residual` may alias `C`
// (x += f(x)): every element is read and then written by the same thread. This file is the mainloop and schedule
// (the cp.async ring and the mma.sync loop of one CTA tile).
#pragma once

#include "common.cuh"
#include "gemm_epilogue.cuh"

namespace gemm {

constexpr int SMEM_PAD = 8;   // bf16 per row: strides of 80 / 144 B make ldmatrix and cp.async conflict-free

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES>
struct Config {
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int LDS = BK + SMEM_PAD;   // shared-memory row stride (elements)
    static constexpr int WM = BM / WARPS_M;     // warp tile rows
    static constexpr int WN = BN / WARPS_N;     // warp tile columns
    static constexpr int MT = WM / 16;          // m16 mma tiles per warp
    static constexpr int NT = WN / 8;           // n8 mma tiles per warp
    static constexpr int KSTEPS = BK / 16;      // k16 mma steps per K tile
    static constexpr int SMEM_BYTES = STAGES * (BM + BN) * LDS * (int)sizeof(bf16);
    static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tile must be a multiple of 16x16");
    static_assert(BK % 16 == 0 && KSTEPS >= 2, "BK must be a multiple of 16, at least 32");
    static_assert((BM * BK / 8) % THREADS == 0 && (BN * BK / 8) % THREADS == 0, "even tile loads");
};

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES>
__device__ __forceinline__ void gemm_bf16(const bf16* __restrict__ A, const bf16* __restrict__ W,
                                          const bf16* __restrict__ bias, const bf16* residual, bf16* C,
                                          int M, int N, int K, int epilogue) {
    using Cfg = Config<BM, BN, BK, WARPS_M, WARPS_N, STAGES>;
    constexpr int MT = Cfg::MT, NT = Cfg::NT, LDS = Cfg::LDS, KSTEPS = Cfg::KSTEPS;
    constexpr int ROW_CHUNKS = BK / 8;   // 16-byte chunks per tile row

    extern __shared__ __align__(128) unsigned char smem[];
    bf16* sA = reinterpret_cast<bf16*>(smem);   // [STAGES][BM][LDS]
    bf16* sW = sA + STAGES * BM * LDS;          // [STAGES][BN][LDS]

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    // x walks N so that neighbouring CTAs share their A rows in L2 (W is small and stays there).
    const int block_n = blockIdx.x * BN, block_m = blockIdx.y * BM;

    // One BK slice of A and W into ring slot `stage`, as 16-byte chunks.
    auto load_tile = [&](int stage, int k0) {
        bf16* a_dst = sA + stage * BM * LDS;
        bf16* w_dst = sW + stage * BN * LDS;
#pragma unroll
        for (int c = tid; c < BM * ROW_CHUNKS; c += Cfg::THREADS) {
            int r = c / ROW_CHUNKS, kc = (c % ROW_CHUNKS) * 8;
            int gr = block_m + r, gk = k0 + kc;
            bool ok = gr < M && gk < K;
            cp_async_16(smem_addr(a_dst + r * LDS + kc), ok ? A + (size_t)gr * K + gk : A, ok);
        }
#pragma unroll
        for (int c = tid; c < BN * ROW_CHUNKS; c += Cfg::THREADS) {
            int r = c / ROW_CHUNKS, kc = (c % ROW_CHUNKS) * 8;
            int gr = block_n + r, gk = k0 + kc;
            bool ok = gr < N && gk < K;
            cp_async_16(smem_addr(w_dst + r * LDS + kc), ok ? W + (size_t)gr * K + gk : W, ok);
        }
    };

    // Per-lane ldmatrix offsets inside a warp tile (see ldmatrix_x4 / mma_bf16_16816 in common.cuh):
    //  A: matrices (rows 0-7,k 0-7) (rows 8-15,k 0-7) (rows 0-7,k 8-15) (rows 8-15,k 8-15) = a0..a3
    //  W: matrices (n 0-7,k 0-7) (n 0-7,k 8-15) (n 8-15,k 0-7) (n 8-15,k 8-15) = b0,b1 of two n8 tiles
    const int a_row = warp_m * Cfg::WM + (lane & 15), a_col = (lane >> 4) * 8;
    const int w_row = warp_n * Cfg::WN + (lane & 7) + ((lane >> 4) << 3), w_col = ((lane >> 3) & 1) * 8;

    // Fragments are double-buffered in registers: step kk+1 is read from shared memory while the
    // tensor cores work on step kk.
    uint32_t af[2][MT][4], bfr[2][NT][2];
    auto load_frags = [&](int buf, int stage, int kk) {
        const bf16* a_s = sA + stage * BM * LDS + kk * 16;
        const bf16* w_s = sW + stage * BN * LDS + kk * 16;
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
            ldmatrix_x4(af[buf][mt][0], af[buf][mt][1], af[buf][mt][2], af[buf][mt][3],
                        smem_addr(a_s + (a_row + mt * 16) * LDS + a_col));
#pragma unroll
        for (int np = 0; np < NT / 2; ++np)
            ldmatrix_x4(bfr[buf][2 * np][0], bfr[buf][2 * np][1], bfr[buf][2 * np + 1][0], bfr[buf][2 * np + 1][1],
                        smem_addr(w_s + (w_row + np * 16) * LDS + w_col));
    };

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    const int k_tiles = (K + BK - 1) / BK;

    // Prologue: fill STAGES-1 slots. Every K tile commits one group, empty or not, so that
    // wait_group<STAGES-2> always means "the next tile to read has landed".
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles) load_tile(s, s * BK);
        cp_async_commit();
    }
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    int read_stage = 0, write_stage = STAGES - 1;
    load_frags(0, read_stage, 0);

    // Main loop (the CUTLASS sm80 "multistage" schedule): the barrier for tile kt+1 sits before the
    // last k16 step of tile kt, so its wait overlaps that step's mma; the load of tile kt+STAGES-1
    // is issued at the first step, into the slot every warp finished reading before that barrier.
    for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            if (kk == KSTEPS - 1) {
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
            }
            load_frags((kk + 1) & 1, read_stage, (kk + 1) % KSTEPS);
            if (kk == 0) {
                const int next = kt + STAGES - 1;
                if (next < k_tiles) load_tile(write_stage, next * BK);
                cp_async_commit();
                write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
            }
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) mma_bf16_16816(acc[mt][nt], af[kk & 1][mt], bfr[kk & 1][nt]);
        }
    }
    cp_async_wait<0>();   // nothing may be in flight into shared memory when the CTA exits

    // Epilogue straight from the accumulators: each thread owns pairs of adjacent columns.
    const bool has_bias = (epilogue & BIAS) != 0, has_gelu = (epilogue & GELU) != 0,
               has_res = (epilogue & RESIDUAL) != 0;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        const int col = block_n + warp_n * Cfg::WN + nt * 8 + (lane & 3) * 2;
        if (col >= N) continue;   // N % 8 == 0, so col + 1 < N as well
        const float2 b = load_bias_pair(bias, col, has_bias);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = block_m + warp_m * Cfg::WM + mt * 16 + (lane >> 2) + half * 8;
                if (row >= M) continue;
                store_pair(C, residual, (size_t)row * N + col, acc[mt][nt][2 * half] + b.x,
                           acc[mt][nt][2 * half + 1] + b.y, has_gelu, has_res);
            }
        }
    }
}

}  // namespace gemm
