// Appearance pooling for the tracker: the mean of an image embedding under a mask's cell weights.
//
// One block per request: its embedding (a bf16 ring slot, [E*E, C] channels-last, what the encoder's neck
// writes), its weights (fp32 [E*E], the share of each cell the mask covers) and the rows and columns where
// the weights are non-zero. Each thread sums one channel over those cells in fp32 and divides by the
// weights' total, so a small object costs only its own cells. Reads are coalesced across the channels.
#pragma once

#include <cuda_bf16.h>
#include <stdint.h>

namespace pool_ops {

// bounds: [y0, y1, x0, x1] (end exclusive) of the cells to read.
__device__ __forceinline__ void pool_mean(const __nv_bfloat16* emb, const float* weights, const int* bounds,
                                          float* out, int side, int channels) {
    const int y0 = bounds[0], y1 = bounds[1], x0 = bounds[2], x1 = bounds[3];
    float total = 0.f;
    for (int y = y0; y < y1; ++y) {
        for (int x = x0; x < x1; ++x) {
            total += weights[y * side + x];
        }
    }
    for (int c = threadIdx.x; c < channels; c += blockDim.x) {
        float acc = 0.f;
        for (int y = y0; y < y1; ++y) {
            for (int x = x0; x < x1; ++x) {
                const float w = weights[y * side + x];
                if (w != 0.f) {
                    acc += w * __bfloat162float(emb[(size_t) (y * side + x) * channels + c]);
                }
            }
        }
        out[c] = total > 0.f ? acc / total : 0.f;
    }
}

}  // namespace pool_ops
