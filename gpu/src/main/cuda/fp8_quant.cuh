// FP8 (e4m3) quantization of the activations the FP8 GEMM reads (gemm_sm90_tma.cuh with E4M3): each row of a bf16
// [rows, C] matrix becomes C e4m3 bytes and one fp32 scale, x ~= q * scale, with
//   amax  = max(max_c |x[r, c]|, 1e-12)          (a row of zeros gets a tiny scale and all-zero bytes)
//   scale = amax / 448                           (448: the largest finite e4m3)
//   q     = e4m3(x * (448 / amax))               (round to nearest even, saturating at +-448: cvt .satfinite)
// all in fp32 with explicit rounding (no contraction), so io.samstream.gpu.fp8.E4m3 reproduces every byte on the
// host. Per-row (per-token) scales keep one outlier token from flattening the others; the GEMM multiplies them
// back per output row in its epilogue (gemm_fp8_sm90_epilogue.cuh).
//
// Two producers, one warp per row, the row in registers (VEC 16-byte chunks of 8 bf16 per lane, C <= 256 VEC,
// C % 8 == 0; the host picks the smallest VEC that holds C, as for layernorm.cuh):
//   quantize_rows   a bf16 matrix as it is (the attention output before proj, the GELU output before mlp.lin2);
//   layernorm_e4m3  LayerNorm (layernorm.cuh's statistics) fused with the quantization of its output: the encoder's
//                   norm1 / norm2 feed only qkv / mlp.lin1, so the bf16 output is never written.
// Every target: the conversion is the hardware's cvt on sm_89+ and cuda_fp8.h's exact emulation before.
#pragma once

#include <cuda_fp8.h>

#include "common.cuh"
#include "layernorm.cuh"

namespace fp8_quant {

constexpr float E4M3_MAX = 448.f;
constexpr float MIN_AMAX = 1e-12f;

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Four floats -> four e4m3 bytes, a at the lowest address.
__device__ __forceinline__ uint32_t e4m3x4(float a, float b, float c, float d) {
    const uint32_t lo = __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3);
    const uint32_t hi = __nv_cvt_float2_to_fp8x2(make_float2(c, d), __NV_SATFINITE, __NV_E4M3);
    return lo | (hi << 16);
}

// The warp's row (lane's chunks lane, lane + 32, ... in v; `amax` this lane's largest |v|) as e4m3 bytes at q + base
// and its scale at scale[row].
template <int VEC>
__device__ __forceinline__ void store_row_e4m3(const float (&v)[VEC][8], float amax, uint8_t* q, float* scale,
                                               size_t base, int row, int lane, int C) {
    amax = fmaxf(warp_max(amax), MIN_AMAX);
    const float inv = __fdiv_rn(E4M3_MAX, amax);
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        const int c = (lane + 32 * i) * 8;
        if (c < C) {
            float s[8];
#pragma unroll
            for (int j = 0; j < 8; ++j) s[j] = __fmul_rn(v[i][j], inv);
            uint2 out;
            out.x = e4m3x4(s[0], s[1], s[2], s[3]);
            out.y = e4m3x4(s[4], s[5], s[6], s[7]);
            *reinterpret_cast<uint2*>(q + base + c) = out;
        }
    }
    if (lane == 0) scale[row] = __fdiv_rn(amax, E4M3_MAX);
}

// x [rows, C] bf16 -> q [rows, C] e4m3 + scale [rows] fp32.
template <int VEC>
__device__ __forceinline__ void quantize_rows(const bf16* __restrict__ x, uint8_t* __restrict__ q,
                                              float* __restrict__ scale, int rows, int C) {
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;
    const size_t base = (size_t)row * C;
    float v[VEC][8];
    float amax = 0.f;
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        const int c = (lane + 32 * i) * 8;
        if (c < C) {
            layernorm::load8(x + base + c, v[i]);
#pragma unroll
            for (int j = 0; j < 8; ++j) amax = fmaxf(amax, fabsf(v[i][j]));
        }
    }
    store_row_e4m3<VEC>(v, amax, q, scale, base, row, lane, C);
}

// y = LayerNorm(x) * gamma + beta (fp32, as layernorm_bf16 without a residual) -> q [rows, C] e4m3 + scale [rows].
template <int VEC>
__device__ __forceinline__ void layernorm_e4m3(const bf16* __restrict__ x, const bf16* __restrict__ gamma,
                                               const bf16* __restrict__ beta, uint8_t* __restrict__ q,
                                               float* __restrict__ scale, int rows, int C, float eps) {
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;
    const size_t base = (size_t)row * C;
    float v[VEC][8];
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        const int c = (lane + 32 * i) * 8;
        if (c < C) {
            layernorm::load8(x + base + c, v[i]);
#pragma unroll
            for (int j = 0; j < 8; ++j) sum += v[i][j];
        }
    }
    const float mean = layernorm::warp_sum(sum) / C;
    const float rstd = layernorm::row_rstd<VEC>(v, mean, lane, C, eps);
    float amax = 0.f;
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        const int c = (lane + 32 * i) * 8;
        if (c < C) {
            float g[8], b[8];
            layernorm::load8(gamma + c, g);
            layernorm::load8(beta + c, b);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                v[i][j] = (v[i][j] - mean) * rstd * g[j] + b[j];
                amax = fmaxf(amax, fabsf(v[i][j]));
            }
        }
    }
    store_row_e4m3<VEC>(v, amax, q, scale, base, row, lane, C);
}

}  // namespace fp8_quant
