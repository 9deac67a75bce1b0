// LayerNorm over the last dimension: y = (s - mean(s)) / sqrt(var(s) + eps) * gamma + beta, where
// s = x, or s = x + residual when a residual is given (then s is also written to sum_out if that is
// non-null: the pre-norm transformer step "x = x + attn(x); h = norm2(x)" in one pass).
//
// One warp per row. The row stays in registers between the two passes (mean, then the variance as
// the mean of squared deviations, which does not cancel catastrophically like E[x^2] - E[x]^2).
// bf16 in and out, fp32 math. Constraints (checked on the host): C % 8 == 0, C <= 32 * 8 * VEC
// (VEC 16-byte chunks per lane, 2048 for the widest kernel, VEC = MAX_VEC = 8), rows 16-byte aligned.
//
// VEC is a template parameter so that a kernel holds only the row it needs: the kernel is memory-bound, and its
// rate follows the bytes in flight per SM, i.e. the warps resident. Sized for 2048 columns (64 floats of row per
// thread) it held too few warps to reach the memory rate on vit_b's 768 columns (bench/results/code-comment-figures.md); the
// host picks the smallest VEC that holds C (768: 3). When s is written as bf16, the statistics are taken
// over the rounded s, so the fused kernel computes exactly what the unfused add + norm would.
#pragma once

#include "common.cuh"

namespace layernorm {

constexpr int MAX_VEC = 8;   // 16-byte chunks (8 bf16) per lane: C up to 2048

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ void load8(const bf16* p, float v[8]) {
    uint4 raw = *reinterpret_cast<const uint4*>(p);
    const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        float2 f = unpack_bf16x2(w[i]);
        v[2 * i] = f.x;
        v[2 * i + 1] = f.y;
    }
}

__device__ __forceinline__ void store8(bf16* p, const float v[8]) {
    uint4 raw;
    raw.x = pack_bf16x2(v[0], v[1]);
    raw.y = pack_bf16x2(v[2], v[3]);
    raw.z = pack_bf16x2(v[4], v[5]);
    raw.w = pack_bf16x2(v[6], v[7]);
    *reinterpret_cast<uint4*>(p) = raw;
}

// 1 / sqrt(var + eps) of a warp's row (lane's chunks lane, lane + 32, ... in v), the variance as the mean of squared
// deviations from `mean` (no catastrophic cancellation). Shared with fp8_quant.cuh's LayerNorm.
template <int VEC>
__device__ __forceinline__ float row_rstd(const float (&v)[VEC][8], float mean, int lane, int C, float eps) {
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        if ((lane + 32 * i) * 8 < C) {
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const float d = v[i][j] - mean;
                sq += d * d;
            }
        }
    }
    return rsqrtf(warp_sum(sq) / C + eps);
}

template <int VEC>
__device__ __forceinline__ void layernorm_bf16(const bf16* x, const bf16* residual, bf16* sum_out,
                                               const bf16* __restrict__ gamma, const bf16* __restrict__ beta,
                                               bf16* y, int rows, int C, float eps) {
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;

    // Lane handles the 8-element chunks lane, lane + 32, lane + 64, ...
    const size_t base = (size_t)row * C;
    static_assert(VEC >= 1 && VEC <= MAX_VEC, "1 to 8 chunks of 8 per lane");
    float v[VEC][8];

    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        const int c = (lane + 32 * i) * 8;
        if (c < C) {
            load8(x + base + c, v[i]);
            if (residual != nullptr) {
                float r[8];
                load8(residual + base + c, r);
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    // Round the sum to bf16 first: the statistics see what sum_out holds.
                    v[i][j] = __bfloat162float(__float2bfloat16_rn(v[i][j] + r[j]));
                }
                if (sum_out != nullptr) store8(sum_out + base + c, v[i]);
            }
#pragma unroll
            for (int j = 0; j < 8; ++j) sum += v[i][j];
        }
    }
    const float mean = warp_sum(sum) / C;
    const float rstd = row_rstd<VEC>(v, mean, lane, C, eps);

#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        const int c = (lane + 32 * i) * 8;
        if (c < C) {
            float g[8], b[8], o[8];
            load8(gamma + c, g);
            load8(beta + c, b);
#pragma unroll
            for (int j = 0; j < 8; ++j) o[j] = (v[i][j] - mean) * rstd * g[j] + b[j];
            store8(y + base + c, o);
        }
    }
}

}  // namespace layernorm
