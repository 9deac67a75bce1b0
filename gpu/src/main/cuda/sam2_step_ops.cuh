// The SAM 2 video step's data movement on the device (CudaSam2Tracker): a table of copies (gathering each object's
// memories and pointers from its bank into the memory attention's input, and storing a frame's new memory back),
// the no-object embedding of the objects the decoder judged absent, and 8-bit RGB frames to the model's input.
#pragma once

#include "common.cuh"

namespace sam2_step_ops {

// One copy of the table: `chunks` 16-byte chunks from src to dst (both 16-byte aligned).
struct Span {
    const uint4* src;
    uint4* dst;
    long long chunks;
};

// ---- copies every span of the table; blockIdx.x picks the span, blockIdx.y / threads share its chunks.
__device__ __forceinline__ void copy_spans(const Span* __restrict__ spans, int n) {
    if ((int)blockIdx.x >= n) return;
    const Span s = spans[blockIdx.x];
    const long long step = (long long)gridDim.y * blockDim.x;
    for (long long i = blockIdx.y * (long long)blockDim.x + threadIdx.x; i < s.chunks; i += step) s.dst[i] = s.src[i];
}

// ---- memory [B, per] bf16 += no_obj [memDim] (bf16, repeated every memDim values) where the object's score is not
// above 0 (NaN counts as absent, as the reference's !(score > 0)). One thread per 8 values; per % 8 == 0, memDim % 8 == 0.
__device__ __forceinline__ void no_object_where_absent(bf16* __restrict__ mem, const bf16* __restrict__ no_obj,
                                                       const float* __restrict__ scores, int B, long long per,
                                                       int memDim) {
    const long long total = (long long)B * per;
    for (long long i = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 8; i < total;
         i += (long long)gridDim.x * blockDim.x * 8) {
        const int b = (int)(i / per);
        if (scores[b] > 0.f) continue;
        const long long at = i - (long long)b * per;
        *reinterpret_cast<uint4*>(mem + i) = add_bf16x8(*reinterpret_cast<const uint4*>(mem + i),
                                                        *reinterpret_cast<const uint4*>(no_obj + at % memDim));
    }
}

// ---- rgb u8 [B, S, S, 3] -> fp32 planar [B, 3, S, S]: (u8 / 255 - mean) / std, as Sam2Model.normalize (the division
// by 255 in double, then fp32).
__device__ __forceinline__ void normalize_rgb8(const uint8_t* __restrict__ rgb, float* __restrict__ out, int B, int S) {
    const float mean[3] = {0.485f, 0.456f, 0.406f}, stdv[3] = {0.229f, 0.224f, 0.225f};
    const long long plane = (long long)S * S, total = (long long)B * plane;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long b = i / plane, p = i - b * plane;
#pragma unroll
        for (int ch = 0; ch < 3; ++ch) {
            const float v = __double2float_rn(rgb[i * 3 + ch] / 255.0);
            out[(b * 3 + ch) * plane + p] = (v - mean[ch]) / stdv[ch];
        }
    }
}

}  // namespace sam2_step_ops
