// The Hopper GEMM's epilogue from the accumulators (sm_90a): + bias, GELU, + residual (read a group of column tiles
// ahead), stored as bf16 pairs; the register epilogue of gemm_sm90.cuh and the residual read of gemm_sm90_tma.cuh.
#pragma once

#include "common.cuh"
#include "gemm_epilogue.cuh"
#include "gemm_sm90_ptx.cuh"

namespace gemm_sm90 {

#ifdef SAMSTREAM_SM90A

// The residual pairs of RG column tiles of one lane's two rows (row_base, row_base + 8) from column col0 (the first
// tile's pair; a tile is 8 columns further), zeros without a residual or past M / N: the read-ahead of store_tile
// and gemm_sm90_tma's stage_and_store_tile (see store_tile for why it reads a group ahead).
template <int RG>
__device__ __forceinline__ void load_residual_group(uint32_t (&res)[RG][2], const bf16* residual, int M, int N,
                                                    int row_base, int col0, bool has_res) {
#pragma unroll
    for (int jj = 0; jj < RG; ++jj) {
        const int col = col0 + jj * 8;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = row_base + half * 8;
            res[jj][half] = has_res && col < N && row < M
                                ? *reinterpret_cast<const uint32_t*>(residual + (size_t)row * N + col)
                                : 0u;
        }
    }
}

// Epilogue straight from the accumulators, as in gemm.cuh: + bias, GELU, + residual (which may alias C:
// each element is read and written by the same thread). The consumer's rows start at block_m + half_m.
//
// The residual is read a group of RG column tiles ahead of the group's stores. `residual` may alias C, so the
// compiler cannot move a load of it above an earlier store to C: read and stored one pair at a time, each thread
// has one global load in flight and the tile's epilogue waits out 2 BN / 8 load latencies in a row (the bias +
// residual shapes ran at 2/3 of the bias-only ones of the same K). Reading a group first is safe because every
// element is read, then written, by the same thread. RG: column tiles per group, 2 RG registers per thread.
template <int BM, int BN, int RG, int MI, int ACC>
__device__ __forceinline__ void store_tile(const float (&acc)[MI][ACC], const bf16* __restrict__ bias,
                                           const bf16* residual, bf16* C, int M, int N, int block_m, int half_m,
                                           int block_n, int warp, int lane, bool has_bias, bool has_gelu,
                                           bool has_res) {
    static_assert((BN / 8) % RG == 0, "whole groups of column tiles");
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
        const int row_base = block_m + half_m + mi * 64 + warp * 16 + (lane >> 2);
#pragma unroll
        for (int j0 = 0; j0 < BN / 8; j0 += RG) {
            uint32_t res[RG][2];
            load_residual_group<RG>(res, residual, M, N, row_base, block_n + j0 * 8 + (lane & 3) * 2, has_res);
#pragma unroll
            for (int jj = 0; jj < RG; ++jj) {
                const int j = j0 + jj;
                const int col = block_n + j * 8 + (lane & 3) * 2;
                if (col >= N) continue;   // N % 8 == 0, so col + 1 < N as well
                const float2 b = gemm::load_bias_pair(bias, col, has_bias);
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int row = row_base + half * 8;
                    if (row >= M) continue;
                    float v0 = acc[mi][4 * j + 2 * half] + b.x, v1 = acc[mi][4 * j + 2 * half + 1] + b.y;
                    if (has_gelu) {
                        v0 = gemm::gelu_erf(v0);
                        v1 = gemm::gelu_erf(v1);
                    }
                    const float2 r = unpack_bf16x2(res[jj][half]);   // zeros without a residual
                    *reinterpret_cast<uint32_t*>(C + (size_t)row * N + col) = pack_bf16x2(v0 + r.x, v1 + r.y);
                }
            }
        }
    }
}

#endif  // SAMSTREAM_SM90A

}  // namespace gemm_sm90
