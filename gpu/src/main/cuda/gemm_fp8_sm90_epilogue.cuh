// The FP8 (e4m3) Hopper GEMM's dequantization (sm_90a): the accumulators hold sum_k qa[r,k] qw[c,k]; the product of the
// bf16 tensors they stand for is that times a_scale[r] (the activation row's scale, written by the kernel that
// quantized it: fp8_quant.cuh) times w_scale[c] (the weight's output channel, made at load). Applied in place, before
// the bf16 GEMM's TMA-store epilogue (bias, GELU, residual: gemm_sm90_tma_epilogue.cuh), which then runs unchanged.
#pragma once

#include "common.cuh"
#include "gemm_sm90_ptx.cuh"

namespace gemm_sm90 {

#ifdef SAMSTREAM_SM90A

// One consumer warpgroup's 64 x BN accumulators (rows row0 ..., columns block_n ...; the m64nN layout: acc[4j + 2h +
// e] is row row0 + 16 warp + lane / 4 + 8 h, column block_n + 8 j + 2 (lane % 4) + e) times their row and column
// scales. Rows past M and columns past N get 0 (the store clips them anyway; the scales end at M and N).
template <int BN>
__device__ __forceinline__ void dequantize_accumulators(float (&acc)[BN / 2], const float* __restrict__ a_scale,
                                                        const float* __restrict__ w_scale, int M, int N, int row0,
                                                        int block_n, int warp, int lane) {
    const int r = row0 + warp * 16 + (lane >> 2);
    const float s0 = r < M ? __ldg(a_scale + r) : 0.f, s1 = r + 8 < M ? __ldg(a_scale + r + 8) : 0.f;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        const int col = block_n + j * 8 + (lane & 3) * 2;   // even, and N % 8 == 0: col + 1 < N too
        const float2 w = col < N ? __ldg(reinterpret_cast<const float2*>(w_scale + col)) : make_float2(0.f, 0.f);
        acc[4 * j + 0] *= s0 * w.x;
        acc[4 * j + 1] *= s0 * w.y;
        acc[4 * j + 2] *= s1 * w.x;
        acc[4 * j + 3] *= s1 * w.y;
    }
}

#endif  // SAMSTREAM_SM90A

}  // namespace gemm_sm90
