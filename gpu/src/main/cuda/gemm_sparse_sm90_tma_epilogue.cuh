// The epilogue of the TMA-fed 2:4 Hopper GEMM (sm_90a): C^T leaves the accumulators through stmatrix .trans into
// 128B-swizzled staging boxes of C (the residual already there when present), with bias, GELU and residual as in
// every GEMM of this directory; the kernel (gemm_sparse_sm90_tma.cuh) stores the boxes by TMA.
#pragma once

#include "common.cuh"
#include "gemm_epilogue.cuh"
#include "gemm_sm90_ptx.cuh"

namespace gemm_sparse_sm90_tma {

#ifdef SAMSTREAM_SM90A

// Four 8x8 b16 matrices to shared memory, each transposed: lane l gives the address of row l % 8 of matrix l / 8,
// which receives column l % 8 of that matrix as the lanes hold it (thread t: row t / 4, columns 2 (t % 4), + 1).
// The inverse of ldmatrix_x4_trans.
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

// The epilogue of one m64 weight block of a consumer warpgroup: acc holds C^T[64 weight rows][128 activation rows]
// (n from n0, m from m0), staged through `buf` (two 64 x 64 boxes of C: activation rows 0..63, 64..127), which
// holds the residual tile when has_res. Bias, GELU and residual as in every GEMM of this directory.
__device__ __forceinline__ void stage_block(const float (&acc)[64], uint32_t buf, const bf16* __restrict__ bias, int N,
                                            int n0, int warp, int lane, bool has_bias, bool has_gelu, bool has_res) {
    constexpr int BOX_BYTES = 64 * 64 * 2;
    const int g = lane >> 2;
    float b[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int n = n0 + warp * 16 + g + 8 * h;
        b[h] = has_bias && n < N ? __bfloat162float(bias[n]) : 0.f;
    }
    // This lane addresses row (lane % 8) of matrix i = lane / 8 of each x4: n8 tile j = jp + i / 2 of activation rows,
    // weight rows 16 warp + 8 (i % 2) .. + 7, i.e. 16-byte chunk 2 warp + i % 2 of activation row 8 j + lane % 8.
    const int i = lane >> 3, c = lane & 7;
#pragma unroll
    for (int jp = 0; jp < 16; jp += 2) {
        const int m = 8 * (jp + (i >> 1)) + c;   // activation row within the 128
        const int r = m & 63, chunk = 2 * warp + (i & 1);
        const uint32_t addr = buf + (m >> 6) * BOX_BYTES + r * 128 + ((chunk ^ (r & 7)) << 4);
        uint32_t res[4] = {0u, 0u, 0u, 0u};
        if (has_res) ldmatrix_x4_trans(res[0], res[1], res[2], res[3], addr);
        uint32_t out[4];
#pragma unroll
        for (int x = 0; x < 4; ++x) {
            const int j = jp + (x >> 1), h = x & 1;
            float v0 = acc[4 * j + 2 * h] + b[h], v1 = acc[4 * j + 2 * h + 1] + b[h];
            if (has_gelu) {
                v0 = gemm::gelu_erf(v0);
                v1 = gemm::gelu_erf(v1);
            }
            const float2 rv = unpack_bf16x2(res[x]);   // zeros without a residual
            out[x] = pack_bf16x2(v0 + rv.x, v1 + rv.y);
        }
        stmatrix_x4_trans(addr, out[0], out[1], out[2], out[3]);
    }
}

#endif  // SAMSTREAM_SM90A

}  // namespace gemm_sparse_sm90_tma
