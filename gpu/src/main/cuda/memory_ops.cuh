// The element-wise kernels around SAM 2's memory attention GEMMs: the 2-D axial rotary encoding (RoPE) of
// query and key rows, ReLU of the feed-forward layer, and a plain sum (memory + its position, the cross
// attention's keys).
#pragma once

#include "common.cuh"

namespace memory_ops {

// ---- RoPE in place: rows [rows, ld] bf16, each head's vector (heads of hd columns from column 0) rotated pair by
// pair, (v[2j], v[2j+1]) by the angle of token r % tokens: cos / sin fp32 [tokens, hd / 2] (RotaryEncoding's
// tables). fp32 rotation, one rounding. One thread per pair.
__device__ __forceinline__ void rope(bf16* __restrict__ x, int ld, int rows, int heads, int hd,
                                     const float* __restrict__ cos_t, const float* __restrict__ sin_t, int tokens) {
    const int pairs = hd / 2;
    const long long total = (long long)rows * heads * pairs;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int j = (int)(i % pairs);
        const long long rh = i / pairs;
        const int h = (int)(rh % heads);
        const long long r = rh / heads;
        const int t = (int)(r % tokens);
        uint32_t* p = reinterpret_cast<uint32_t*>(x + (size_t)r * ld + h * hd + 2 * j);
        const float2 v = unpack_bf16x2(*p);
        const float c = cos_t[(size_t)t * pairs + j], s = sin_t[(size_t)t * pairs + j];
        *p = pack_bf16x2(v.x * c - v.y * s, v.x * s + v.y * c);
    }
}

// ---- x = max(x, 0) in place, 8 bf16 per step. Constraints: n % 8 == 0, 16-byte aligned.
__device__ __forceinline__ void relu(bf16* __restrict__ x, long long n) {
    for (long long i = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 8; i < n;
         i += (long long)gridDim.x * blockDim.x * 8) {
        uint4 v = *reinterpret_cast<const uint4*>(x + i);
        uint32_t* vs = reinterpret_cast<uint32_t*>(&v);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const float2 p = unpack_bf16x2(vs[k]);
            vs[k] = pack_bf16x2(fmaxf(p.x, 0.f), fmaxf(p.y, 0.f));
        }
        *reinterpret_cast<uint4*>(x + i) = v;
    }
}

// ---- y = a + b, 8 bf16 per step (fp32 sum, one rounding); y may alias a. Constraints: n % 8 == 0, aligned.
__device__ __forceinline__ void add(const bf16* a, const bf16* __restrict__ b, bf16* y, long long n) {
    for (long long i = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 8; i < n;
         i += (long long)gridDim.x * blockDim.x * 8) {
        *reinterpret_cast<uint4*>(y + i) = add_bf16x8(*reinterpret_cast<const uint4*>(a + i),
                                                      *reinterpret_cast<const uint4*>(b + i));
    }
}

}  // namespace memory_ops
