// Appearance maps for the tracker's search for lost objects: how much the embedding around each image cell looks like
// an object's remembered look.
//
// One warp per cell (blockIdx.x * warps + warp) of one request (blockIdx.y). Embeddings are bf16 [side*side, C]
// channels-last (a ring slot). A cell (x, y) of the image's first cols x rows cells is described by the mean of the
// cells of its window: (wc - 1) / 2 before it and wc / 2 after it along x (likewise wr along y), clipped to the image.
// With a = window mean - mean and b = look - mean (per channel, the lanes taking the channels in turn, fp32), its
// score is 2 a.b / (|a|^2 + |b|^2) (0 when both are zero), written to out[y * cols + x].
// Reference: io.samstream.gpu.model.EmbeddingPool.cellSimilarity.
#pragma once

#include <cuda_bf16.h>

namespace appearance_ops {

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

// look, mean: fp32 [channels]; dims: cols, rows, wc, wr.
__device__ __forceinline__ void cell_similarity(const __nv_bfloat16* emb, const float* look, const float* mean,
                                                const int* dims, float* out, int side, int channels) {
    const int cols = dims[0], rows = dims[1], wc = dims[2], wr = dims[3];
    const int lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    const int cell = (int) blockIdx.x * warps + (threadIdx.x >> 5);
    if (cell >= cols * rows) {
        return;  // the whole warp leaves together
    }
    const int y = cell / cols, x = cell % cols;
    const int x0 = max(0, x - (wc - 1) / 2), x1 = min(cols - 1, x + wc / 2);
    const int y0 = max(0, y - (wr - 1) / 2), y1 = min(rows - 1, y + wr / 2);
    const float inv = 1.f / (float) ((x1 - x0 + 1) * (y1 - y0 + 1));
    float dot = 0.f, aa = 0.f, bb = 0.f;
    for (int k = lane; k < channels; k += 32) {
        float sum = 0.f;
        for (int v = y0; v <= y1; ++v) {
            for (int u = x0; u <= x1; ++u) {
                sum += __bfloat162float(emb[(size_t) (v * side + u) * channels + k]);
            }
        }
        const float a = sum * inv - mean[k];
        const float b = look[k] - mean[k];
        dot = fmaf(a, b, dot);
        aa = fmaf(a, a, aa);
        bb = fmaf(b, b, bb);
    }
    dot = warp_sum(dot);
    aa = warp_sum(aa);
    bb = warp_sum(bb);
    if (lane == 0) {
        out[cell] = aa + bb > 0.f ? 2.f * dot / (aa + bb) : 0.f;
    }
}

}  // namespace appearance_ops
