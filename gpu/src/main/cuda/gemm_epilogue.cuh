// The fused GEMM epilogue every GEMM of this directory shares (mma.sync, mma.sp, and the Hopper ones through
// gemm_sm90_epilogue.cuh): the epilogue flags, exact GELU, the bias pair, and one bf16x2 store of a pair of output
// columns with GELU and the residual.
#pragma once

#include "common.cuh"

namespace gemm {

enum Epilogue : int { BIAS = 1, GELU = 2, RESIDUAL = 4 };

// GELU with the erf (nn.GELU's default, not the tanh approximation): 0.5 x (1 + erf(x / sqrt 2)).
// erfc(z) by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, far below bf16 resolution) with the
// hardware exp: ~12 instructions instead of erff's ~40, which made the GELU epilogue cost as much as
// the matrix product it follows. Written as erfc so that the negative tail does not cancel.
__device__ __forceinline__ float gelu_erf(float x) {
    const float z = fabsf(x) * 0.70710678118654752f;
    const float t = __fdividef(1.0f, fmaf(0.3275911f, z, 1.0f));
    const float poly =
        t * fmaf(t, fmaf(t, fmaf(t, fmaf(t, 1.061405429f, -1.453152027f), 1.421413741f), -0.284496736f), 0.254829592f);
    const float erfc_z = poly * __expf(-z * z);
    return 0.5f * x * (x >= 0.f ? 2.0f - erfc_z : erfc_z);
}

// The fused epilogue, shared by every GEMM of this directory (dense mma.sync, sparse mma.sp): one pair of
// adjacent output columns (col, col + 1, col even) of one row. `v0`, `v1` are the fp32 sums with the
// bias already added; then exact GELU, + residual, one bf16x2 store at C[idx]. `residual` may alias C.
__device__ __forceinline__ float2 load_bias_pair(const bf16* __restrict__ bias, int col, bool has_bias) {
    return has_bias ? unpack_bf16x2(*reinterpret_cast<const uint32_t*>(bias + col)) : make_float2(0.f, 0.f);
}

__device__ __forceinline__ void store_pair(bf16* C, const bf16* residual, size_t idx, float v0, float v1,
                                           bool has_gelu, bool has_res) {
    if (has_gelu) {
        v0 = gelu_erf(v0);
        v1 = gelu_erf(v1);
    }
    if (has_res) {
        float2 r = unpack_bf16x2(*reinterpret_cast<const uint32_t*>(residual + idx));
        v0 += r.x;
        v1 += r.y;
    }
    *reinterpret_cast<uint32_t*>(C + idx) = pack_bf16x2(v0, v1);
}

}  // namespace gemm
