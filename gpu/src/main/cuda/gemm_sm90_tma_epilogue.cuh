// The epilogue of the TMA-fed Hopper GEMM (sm_90a): each consumer warpgroup stages its tile of C in swizzled shared
// memory and one thread stores it by TMA (stage_and_store_tile); bias, GELU and residual as gemm_sm90_epilogue.cuh.
#pragma once

#include <cuda.h>   // CUtensorMap

#include "common.cuh"
#include "gemm_epilogue.cuh"
#include "gemm_sm90_epilogue.cuh"
#include "gemm_sm90_ptx.cuh"
#include "gemm_sm90_tma_ptx.cuh"

namespace gemm_sm90_tma {

#ifdef SAMSTREAM_SM90A

// The TMA_STORE epilogue of one consumer warpgroup: its 64 x BN tile (rows row0 ..., columns block_n ...), 128
// columns at a time, through its staging buffer `out` (two 64 x 64 boxes, 128-byte swizzled as map_c reads them:
// row r's 16-byte chunk c at r * 128 + (c ^ r % 8) * 16, so a warp's 8 rows x 16 bytes hit 32 distinct banks), then
// two TMA stores that thread 0 of the warpgroup issues. The warpgroup goes on to its next tile's MMAs while the
// stores drain: only the next use of the buffer waits for them to have been read. Compared with store_tile (each
// thread's 4-byte stores straight to global, 16 bytes per row and warp instruction), the tensor cores idle for
// shared-memory writes instead of global ones. Bias, GELU and the residual as in store_tile; the residual (which
// may alias C) is read a group of RG column tiles ahead, and every element of C is read before its tile's store is
// issued. Rows past M and columns past N are clipped by the TMA unit.
template <int BN, int RG>
__device__ __forceinline__ void stage_and_store_tile(const float (&acc)[BN / 2], const bf16* __restrict__ bias,
                                                     const bf16* residual, const CUtensorMap& map_c, uint32_t out,
                                                     int M, int N, int row0, int block_n, int barrier_id, int warp,
                                                     int lane, bool has_bias, bool has_gelu, bool has_res) {
    constexpr int BOX_BYTES = 64 * 64 * 2;
    static_assert(16 % RG == 0, "whole groups of column tiles per 128 columns");
    const bool issuer = warp == 0 && lane == 0;
#pragma unroll
    for (int h = 0; h < BN / 128; ++h) {
        if (issuer) bulk_wait_group_read<0>();   // the previous store out of this buffer has been read
        warpgroup_sync(barrier_id);
#pragma unroll
        for (int j0 = 16 * h; j0 < 16 * h + 16; j0 += RG) {
            uint32_t res[RG][2];
            gemm_sm90::load_residual_group<RG>(res, residual, M, N, row0 + warp * 16 + (lane >> 2),
                                               block_n + j0 * 8 + (lane & 3) * 2, has_res);
#pragma unroll
            for (int jj = 0; jj < RG; ++jj) {
                const int j = j0 + jj, jl = j - 16 * h;   // column tile, and within these 128 columns
                const int col = block_n + j * 8 + (lane & 3) * 2;
                if (col >= N) continue;                   // clipped by the store; the bias ends at N
                const float2 b = gemm::load_bias_pair(bias, col, has_bias);
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int r = warp * 16 + (lane >> 2) + half * 8;   // row within the warpgroup's 64
                    float v0 = acc[4 * j + 2 * half] + b.x, v1 = acc[4 * j + 2 * half + 1] + b.y;
                    if (has_gelu) {
                        v0 = gemm::gelu_erf(v0);
                        v1 = gemm::gelu_erf(v1);
                    }
                    const float2 rv = unpack_bf16x2(res[jj][half]);   // zeros without a residual
                    st_shared_u32(out + (jl >> 3) * BOX_BYTES + r * 128 + (((jl & 7) ^ (r & 7)) << 4) + (lane & 3) * 4,
                                  pack_bf16x2(v0 + rv.x, v1 + rv.y));
                }
            }
        }
        gemm_sm90::fence_proxy_async();   // this thread's staged values, visible to the TMA unit
        warpgroup_sync(barrier_id);
        if (issuer) {
#pragma unroll
            for (int box = 0; box < 2; ++box) {
                const int c0 = block_n + h * 128 + box * 64;
                if (c0 < N && row0 < M) tma_store_2d(map_c, out + box * BOX_BYTES, c0, row0);
            }
            bulk_commit_group();
        }
    }
}

#endif  // SAMSTREAM_SM90A

}  // namespace gemm_sm90_tma
