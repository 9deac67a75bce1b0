// Camera motion for the tracker: how well one frame's image embedding matches the previous frame's under a shift.
//
// One block per shift (dx, dy) in [-range, range]^2 (block index (dy + range) * (2 range + 1) + dx + range).
// Embeddings are bf16 [side*side, C] channels-last (a ring slot, and the stream's copy of the previous one). The
// warps take the cells in turn, the lanes a cell's channels: a cell's score is the cosine between the previous
// embedding's cell (x, y) and this one's (x + dx, y + dy), summed in fp32 over the cells where both lie in the
// image (the first cols x rows cells; the rest is padding) and divided by their number. A zero cell scores 0.
// Reference: io.samstream.gpu.model.HostEmbeddingMatcher.
#pragma once

#include <cuda_bf16.h>

namespace match_ops {

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

__device__ __forceinline__ void shift_score(const __nv_bfloat16* prev, const __nv_bfloat16* now, float* out,
                                            int side, int channels, int cols, int rows, int range) {
    const int w = 2 * range + 1;
    const int dx = (int) blockIdx.x % w - range;
    const int dy = (int) blockIdx.x / w - range;
    const int x0 = max(0, -dx), x1 = min(cols, cols - dx);
    const int y0 = max(0, -dy), y1 = min(rows, rows - dy);
    const int nx = max(0, x1 - x0), ny = max(0, y1 - y0);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    float acc = 0.f;
    for (int i = warp; i < nx * ny; i += warps) {
        const int y = y0 + i / nx, x = x0 + i % nx;
        const __nv_bfloat16* a = prev + (size_t) (y * side + x) * channels;
        const __nv_bfloat16* b = now + (size_t) ((y + dy) * side + x + dx) * channels;
        float dot = 0.f, na = 0.f, nb = 0.f;
        for (int k = lane; k < channels; k += 32) {
            const float va = __bfloat162float(a[k]);
            const float vb = __bfloat162float(b[k]);
            dot = fmaf(va, vb, dot);
            na = fmaf(va, va, na);
            nb = fmaf(vb, vb, nb);
        }
        dot = warp_sum(dot);
        na = warp_sum(na);
        nb = warp_sum(nb);
        if (na > 0.f && nb > 0.f) {
            acc += dot * rsqrtf(na * nb);
        }
    }
    __shared__ float part[32];
    if (lane == 0) {
        part[warp] = acc;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.f;
        for (int i = 0; i < warps; ++i) {
            s += part[i];
        }
        out[blockIdx.x] = nx * ny > 0 ? s / (float) (nx * ny) : 0.f;
    }
}

}  // namespace match_ops
