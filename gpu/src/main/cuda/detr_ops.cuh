// SAM 3's DETR decoder around its GEMMs (the CPU reference: sam3.DetrDecoder, DecoderLayer, BoxRelativeBias,
// SineEmbedding). The boxes stay fp32 on the device from layer to layer; what the GEMMs read and write is bf16.
//   box_deltas:     each query box's distances to the map's rows and columns, squashed, as 8-wide rows (2 used)
//                   for the bias MLPs' first GEMM: dy [n * H, 8], dx [n * W, 8];
//   box_sine:       the sine encoding of the boxes [n, 2d] (blocks y, x, w, h), for ref_point_head;
//   small_linear:   y = x w^T + b in fp32 for outputs too narrow for the GEMM (the box delta's 4, presence's 1);
//   box_update:     boxes = sigmoid(delta + inverse_sigmoid(boxes));
//   rpb_attention:  the cross-attention to the memory with the box relative position bias added to each score,
//                   computed from the two axes' MLP outputs (bias(q, (j, i)) = ey[q, j] + ex[q, i], zero for the
//                   presence row 0), fp32 online softmax, one CTA per (block of query rows, head) sharing each tile
//                   of keys and values, so the memory is read once a block of rows, not once a row.
#pragma once

#include "common.cuh"

namespace detr_ops {

constexpr int THREADS = 256;
constexpr int ATTN_THREADS = 256;
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
// token). CTA (block of RPB_ROWS query rows, head): tiles of RPB_KEYS keys and values go into shared memory (fp32,
// the keys padded a column against bank conflicts) and are read by every row of the block, so the memory is read
// nq / RPB_ROWS times instead of nq; warp w keeps rows w * RPB_ROWS_PER_WARP.. with an online softmax each: lane = key
// for the scores (the query row broadcast from shared memory), lane = channel for the weighted sum (the
// probabilities passed by shuffles; channels lane and lane + 32). hd <= MAX_HD.
constexpr int RPB_WARPS = ATTN_THREADS / 32;
constexpr int RPB_ROWS_PER_WARP = 2;
constexpr int RPB_ROWS = RPB_WARPS * RPB_ROWS_PER_WARP;
constexpr int RPB_KEYS = 64;

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__device__ __forceinline__ void rpb_attention(const bf16* __restrict__ q, const bf16* __restrict__ k,
                                              const bf16* __restrict__ v, const bf16* __restrict__ ey,
                                              const bf16* __restrict__ ex, int ld, bf16* __restrict__ out, int nq,
                                              int d, int hd, int H, int W, float scale) {
    __shared__ float sq[RPB_ROWS][MAX_HD];
    __shared__ float sk[RPB_KEYS][MAX_HD + 1];
    __shared__ float sv[RPB_KEYS][MAX_HD];
    const int head = blockIdx.y, row0 = blockIdx.x * RPB_ROWS;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int nk = H * W;
    for (int i = tid; i < RPB_ROWS * MAX_HD; i += ATTN_THREADS) {
        const int r = i / MAX_HD, c = i % MAX_HD;
        sq[r][c] = row0 + r < nq && c < hd ? __bfloat162float(q[(long long)(row0 + r) * d + head * hd + c]) * scale
                                           : 0.f;
    }
    float m[RPB_ROWS_PER_WARP], l[RPB_ROWS_PER_WARP], acc0[RPB_ROWS_PER_WARP], acc1[RPB_ROWS_PER_WARP];
#pragma unroll
    for (int rr = 0; rr < RPB_ROWS_PER_WARP; ++rr) {
        m[rr] = -INFINITY;
        l[rr] = acc0[rr] = acc1[rr] = 0.f;
    }
    for (int t0 = 0; t0 < nk; t0 += RPB_KEYS) {
        __syncthreads();  // every warp is done with the previous tile (and, the first time, sq is written)
        for (int i = tid; i < RPB_KEYS * MAX_HD; i += ATTN_THREADS) {
            const int t = i / MAX_HD, c = i % MAX_HD;
            const bool in = t0 + t < nk && c < hd;
            const long long at = (long long)(t0 + t) * d + head * hd + c;
            sk[t][c] = in ? __bfloat162float(k[at]) : 0.f;
            sv[t][c] = in ? __bfloat162float(v[at]) : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int rr = 0; rr < RPB_ROWS_PER_WARP; ++rr) {
            const int r = warp * RPB_ROWS_PER_WARP + rr, row = row0 + r;
            if (row >= nq) break;  // warp-uniform
            for (int s = 0; s < RPB_KEYS && t0 + s < nk; s += 32) {
                const int t = t0 + s + lane;
                float score = -INFINITY;
                if (t < nk) {
                    float a = 0.f;
                    for (int c = 0; c < hd; ++c) a += sq[r][c] * sk[s + lane][c];
                    if (row > 0) {
                        const int j = t / W, i = t % W;
                        a += __bfloat162float(ey[((long long)(row - 1) * H + j) * ld + head])
                             + __bfloat162float(ex[((long long)(row - 1) * W + i) * ld + head]);
                    }
                    score = a;
                }
                const float mn = fmaxf(m[rr], warp_max(score));  // finite: key t0 + s exists
                const float corr = expf(m[rr] - mn), p = expf(score - mn);
                l[rr] = l[rr] * corr + warp_sum(p);
                float a0 = acc0[rr] * corr, a1 = acc1[rr] * corr;
                if (hd > 32) {
#pragma unroll 8
                    for (int u = 0; u < 32; ++u) {
                        const float pu = __shfl_sync(0xffffffffu, p, u);
                        a0 += pu * sv[s + u][lane];
                        a1 += pu * sv[s + u][lane + 32];
                    }
                } else {
#pragma unroll 8
                    for (int u = 0; u < 32; ++u) a0 += __shfl_sync(0xffffffffu, p, u) * sv[s + u][lane];
                }
                acc0[rr] = a0;
                acc1[rr] = a1;
                m[rr] = mn;
            }
        }
    }
#pragma unroll
    for (int rr = 0; rr < RPB_ROWS_PER_WARP; ++rr) {
        const int row = row0 + warp * RPB_ROWS_PER_WARP + rr;
        if (row >= nq) break;
        bf16* o = out + (long long)row * d + head * hd;
        if (lane < hd) o[lane] = __float2bfloat16(acc0[rr] / l[rr]);
        if (lane + 32 < hd) o[lane + 32] = __float2bfloat16(acc1[rr] / l[rr]);
    }
}

}  // namespace detr_ops
