// SAM 3's DETR decoder around its GEMMs (the CPU reference: sam3.DetrDecoder, DecoderLayer, BoxRelativeBias,
// SineEmbedding). The boxes stay fp32 on the device from layer to layer; what the GEMMs read and write is bf16.
//   box_deltas:     each query box's distances to the map's rows and columns, squashed, as 8-wide rows (2 used)
//                   for the bias MLPs' first GEMM: dy [n * H, 8], dx [n * W, 8];
//   box_sine:       the sine encoding of the boxes [n, 2d] (blocks y, x, w, h), for ref_point_head;
//   small_linear:   y = x w^T + b in fp32 for outputs too narrow for the GEMM (the box delta's 4, presence's 1);
//   box_update:     boxes = sigmoid(delta + inverse_sigmoid(boxes));
//   rpb_attention:  the cross-attention to the memory with the box relative position bias added to each score,
//                   computed from the two axes' MLP outputs (bias(q, (j, i)) = ey[q, j] + ex[q, i], zero for the
//                   presence row 0), fp32 online softmax, one CTA per (query row, head).
#pragma once

#include "common.cuh"

namespace detr_ops {

constexpr int THREADS = 256;
constexpr int ATTN_THREADS = 128;
constexpr int MAX_HD = 64;

// sign(8 v) log2(|8 v| + 1) / 3, as BoxRelativeBias.squash.
__device__ __forceinline__ float squash(float v) {
    const float s = v * 8.f;
    const float mag = log2f(fabsf(s) + 1.f);
    return (s > 0.f ? 1.f : (s < 0.f ? -1.f : 0.f)) * mag / 3.f;
}

// boxes [n, 4] (cx, cy, w, h) -> dy [n * H, 8], dx [n * W, 8]: columns 0 and 1 the squashed distances of j / H to the
// box's top and bottom (of i / W to its left and right), columns 2..7 zero.
__device__ __forceinline__ void box_deltas(const float* __restrict__ boxes, bf16* __restrict__ dy,
                                           bf16* __restrict__ dx, int n, int H, int W) {
    const long long rows = (long long)n * (H + W);
    for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < rows;
         r += (long long)gridDim.x * blockDim.x) {
        const bool y = r < (long long)n * H;
        const long long k = y ? r : r - (long long)n * H;
        const int side = y ? H : W;
        const int q = (int)(k / side), j = (int)(k % side);
        const float* b = boxes + 4 * q;
        const float c = y ? b[1] : b[0], ext = y ? b[3] : b[2];
        const float lo = c - 0.5f * ext, hi = c + 0.5f * ext, at = (float)j / side;
        bf16* out = (y ? dy : dx) + k * 8;
        out[0] = __float2bfloat16(squash(at - lo));
        out[1] = __float2bfloat16(squash(at - hi));
#pragma unroll
        for (int z = 2; z < 8; ++z) out[z] = __float2bfloat16(0.f);
    }
}

// boxes [n, 4] -> out [n, 2d]: per box the blocks y, x, w, h of d / 2 channels, channel j of a block
// (sin at even j, cos at odd) of v * 2 pi / 10000^(2 (j / 2) / (d / 2)).
__device__ __forceinline__ void box_sine(const float* __restrict__ boxes, bf16* __restrict__ out, int n, int d) {
    const int half = d / 2;
    const long long total = (long long)n * 2 * d;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int q = (int)(i / (2 * d)), c = (int)(i % (2 * d));
        const int block = c / half, j = c % half;
        const int coord = block == 0 ? 1 : block == 1 ? 0 : block;  // y, x, w, h
        const float e = boxes[4 * q + coord] * 6.283185307179586f;
        const float p = e / powf(10000.f, (float)(2 * (j / 2)) / (float)half);
        out[i] = __float2bfloat16(j % 2 == 0 ? sinf(p) : cosf(p));
    }
}

// y [rows, o] = x [rows, k] (bf16) w [o, k]^T (fp32) + b [o]: one warp per output value.
__device__ __forceinline__ void small_linear(const bf16* __restrict__ x, const float* __restrict__ w,
                                             const float* __restrict__ b, float* __restrict__ y, int rows, int k,
                                             int o) {
    const int lane = threadIdx.x % 32;
    const long long warps = (long long)gridDim.x * blockDim.x / 32;
    for (long long t = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; t < (long long)rows * o; t += warps) {
        const int r = (int)(t / o), c = (int)(t % o);
        float s = 0.f;
        for (int i = lane; i < k; i += 32) s += __bfloat162float(x[(long long)r * k + i]) * w[(long long)c * k + i];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
        if (lane == 0) y[t] = s + b[c];
    }
}

// inverse_sigmoid(x, eps = 1e-3), x clamped to [0, 1].
__device__ __forceinline__ float inverse_sigmoid(float x) {
    const float c = fminf(fmaxf(x, 0.f), 1.f);
    return logf(fmaxf(c, 1e-3f) / fmaxf(1.f - c, 1e-3f));
}

__device__ __forceinline__ void box_update(float* __restrict__ boxes, const float* __restrict__ delta, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 4 * n; i += gridDim.x * blockDim.x) {
        boxes[i] = 1.f / (1.f + expf(-(delta[i] + inverse_sigmoid(boxes[i]))));
    }
}

// out [nq, d] for q [nq, d], k and v [H * W, d] (heads of hd columns), ey [(nq - 1) * H, ld], ex [(nq - 1) * W, ld]
// (column h the bias of head h): softmax(q k^T * scale + bias) v per head, the bias zero for row 0 (the presence
// token). CTA (row, head) of ATTN_THREADS threads; each thread an online softmax over its stride of keys, then the
// threads' partial results combined through shared memory. hd <= MAX_HD.
__device__ __forceinline__ void rpb_attention(const bf16* __restrict__ q, const bf16* __restrict__ k,
                                              const bf16* __restrict__ v, const bf16* __restrict__ ey,
                                              const bf16* __restrict__ ex, int ld, bf16* __restrict__ out, int d,
                                              int hd, int H, int W, float scale) {
    const int row = blockIdx.x, head = blockIdx.y, tid = threadIdx.x;
    const int nk = H * W;
    float qv[MAX_HD], acc[MAX_HD];
#pragma unroll
    for (int c = 0; c < MAX_HD; ++c) {
        qv[c] = c < hd ? __bfloat162float(q[(long long)row * d + head * hd + c]) * scale : 0.f;
        acc[c] = 0.f;
    }
    float m = -INFINITY, l = 0.f;
    for (int t = tid; t < nk; t += ATTN_THREADS) {
        const bf16* kr = k + (long long)t * d + head * hd;
        float s = 0.f;
#pragma unroll
        for (int c = 0; c < MAX_HD; ++c)
            if (c < hd) s += qv[c] * __bfloat162float(kr[c]);
        if (row > 0) {
            const int j = t / W, i = t % W;
            s += __bfloat162float(ey[((long long)(row - 1) * H + j) * ld + head])
                 + __bfloat162float(ex[((long long)(row - 1) * W + i) * ld + head]);
        }
        const float mn = fmaxf(m, s), corr = expf(m - mn), p = expf(s - mn);
        l = l * corr + p;
        const bf16* vr = v + (long long)t * d + head * hd;
#pragma unroll
        for (int c = 0; c < MAX_HD; ++c)
            if (c < hd) acc[c] = acc[c] * corr + p * __bfloat162float(vr[c]);
        m = mn;
    }
    __shared__ float sm[ATTN_THREADS], sl[ATTN_THREADS];
    __shared__ float sacc[ATTN_THREADS / 32][MAX_HD];
    sm[tid] = m;
    __syncthreads();
    float mx = -INFINITY;
    for (int i = 0; i < ATTN_THREADS; ++i) mx = fmaxf(mx, sm[i]);
    const float f = m == -INFINITY ? 0.f : expf(m - mx);
    l *= f;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) l += __shfl_xor_sync(0xffffffffu, l, off);
    const int warp = tid / 32, lane = tid % 32;
    if (lane == 0) sl[warp] = l;
#pragma unroll
    for (int c = 0; c < MAX_HD; ++c) {
        float a = acc[c] * f;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) a += __shfl_xor_sync(0xffffffffu, a, off);
        if (lane == 0) sacc[warp][c] = a;
    }
    __syncthreads();
    if (tid < hd) {
        float total = 0.f, a = 0.f;
        for (int w = 0; w < ATTN_THREADS / 32; ++w) {
            total += sl[w];
            a += sacc[w][tid];
        }
        out[(long long)row * d + head * hd + tid] = __float2bfloat16(a / total);
    }
}

}  // namespace detr_ops
