// The data-movement kernels around SAM 2's Hiera trunk and FPN neck GEMMs: the 7x7 stride-4 patch embedding
// unfolded into GEMM rows, window partition (zero padding) and its reverse added to the residual stream, the 2x2
// max pooling of a stage's first block (its shortcut and its queries), and the neck's nearest 2x top-down sum.
//
// Tokens are channels-last bf16 rows throughout. All but the unfold move 16 bytes (8 channels) per thread and
// step; the host (Sam2Kernels) checks the divisibility each one states.
#pragma once

#include <math_constants.h>

#include "common.cuh"

namespace hiera_ops {

// ---- a KxK convolution (stride, padding) of an fp32 planar image [B, Cin, H, W] as GEMM rows ----------------
// rows bf16 [B * OH * OW, kcols], columns ordered (channel, ky, kx) as the flattened Conv2d weight [O, Cin, K, K];
// columns past Cin * K * K (padding the row to a multiple of 8) and taps outside the image are zeros.
__device__ __forceinline__ void unfold_f32(const float* __restrict__ img, bf16* __restrict__ rows, int B, int Cin,
                                           int H, int W, int K, int stride, int pad, int OH, int OW, int kcols) {
    const long long total = (long long)B * OH * OW * kcols;
    const int taps = Cin * K * K;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long row = i / kcols;
        const int c = (int)(i - row * kcols);
        float v = 0.f;
        if (c < taps) {
            const int ch = c / (K * K), tap = c - ch * K * K;
            const int ky = tap / K, kx = tap - ky * K;
            const int b = (int)(row / ((long long)OH * OW));
            const int t = (int)(row - (long long)b * OH * OW);
            const int y = (t / OW) * stride - pad + ky, x = (t % OW) * stride - pad + kx;
            if (y >= 0 && y < H && x >= 0 && x < W) v = img[(((size_t)b * Cin + ch) * H + y) * W + x];
        }
        rows[i] = __float2bfloat16_rn(v);
    }
}

// ---- window_partition: x [B, H, W, C] -> windows [B, nwh, nww, ws, ws, C], positions past the map zeros ---------
__device__ __forceinline__ void window_partition(const bf16* __restrict__ x, bf16* __restrict__ win, int B, int H,
                                                 int W, int C, int ws) {
    const int nwh = (H + ws - 1) / ws, nww = (W + ws - 1) / ws;
    const int chunks = C / 8;
    const long long total = (long long)B * nwh * nww * ws * ws * chunks;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long pos = i / chunks;
        const int ch = (int)(i - pos * chunks);
        const int in_win = (int)(pos % (ws * ws));
        const long long w = pos / (ws * ws);
        const int wx = (int)(w % nww), wy = (int)((w / nww) % nwh), b = (int)(w / ((long long)nww * nwh));
        const int y = wy * ws + in_win / ws, xx = wx * ws + in_win % ws;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (y < H && xx < W) v = *reinterpret_cast<const uint4*>(x + (((size_t)b * H + y) * W + xx) * C + ch * 8);
        *reinterpret_cast<uint4*>(win + (size_t)pos * C + ch * 8) = v;
    }
}

// ---- window_unpartition, added: x [B, OH, OW, C] += a [B, nwh, nww, qs, qs, C] (window positions past the map
// dropped); nwh x nww windows of qs x qs tokens cover at least OH x OW. fp32 sum, one rounding.
__device__ __forceinline__ void window_unpartition_add(const bf16* __restrict__ a, bf16* __restrict__ x, int B,
                                                       int OH, int OW, int C, int qs, int nwh, int nww) {
    const int chunks = C / 8;
    const long long total = (long long)B * OH * OW * chunks;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long pix = i / chunks;
        const int ch = (int)(i - pix * chunks);
        const int b = (int)(pix / ((long long)OH * OW));
        const int t = (int)(pix - (long long)b * OH * OW);
        const int y = t / OW, xx = t % OW;
        const long long src = (((long long)b * nwh + y / qs) * nww + xx / qs) * qs * qs + (y % qs) * qs + xx % qs;
        uint4* xp = reinterpret_cast<uint4*>(x + (size_t)pix * C + ch * 8);
        *xp = add_bf16x8(*xp, *reinterpret_cast<const uint4*>(a + (size_t)src * C + ch * 8));
    }
}

// ---- 2x2 max pooling, stride 2 (floor): N grids of H x W rows of C channels, grid n's row i at
// src + n * src_batch + i * src_ld -> dst [N, H/2, W/2, C] contiguous. A shortcut (src_ld = C) or the q part of a
// window's qkv rows (src_ld = 3C, one grid per window).
__device__ __forceinline__ void maxpool2x2(const bf16* __restrict__ src, int src_ld, long long src_batch,
                                           bf16* __restrict__ dst, int N, int H, int W, int C) {
    const int OH = H / 2, OW = W / 2, chunks = C / 8;
    const long long total = (long long)N * OH * OW * chunks;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long pix = i / chunks;
        const int ch = (int)(i - pix * chunks);
        const int n = (int)(pix / ((long long)OH * OW));
        const int t = (int)(pix - (long long)n * OH * OW);
        const int y = 2 * (t / OW), xx = 2 * (t % OW);
        const bf16* g = src + n * src_batch + ch * 8;
        float best[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) best[j] = -CUDART_INF_F;
#pragma unroll
        for (int tap = 0; tap < 4; ++tap) {
            const uint4 v = *reinterpret_cast<const uint4*>(g + (size_t)((y + tap / 2) * W + xx + tap % 2) * src_ld);
            const uint32_t* vs = reinterpret_cast<const uint32_t*>(&v);
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const float2 p = unpack_bf16x2(vs[k]);
                best[2 * k] = fmaxf(best[2 * k], p.x);
                best[2 * k + 1] = fmaxf(best[2 * k + 1], p.y);
            }
        }
        uint4 out;
        uint32_t* os = reinterpret_cast<uint32_t*>(&out);
#pragma unroll
        for (int k = 0; k < 4; ++k) os[k] = pack_bf16x2(best[2 * k], best[2 * k + 1]);
        *reinterpret_cast<uint4*>(dst + (size_t)pix * C + ch * 8) = out;
    }
}

// ---- the FPN's top-down step: x [B, 2h, 2w, C] += nearest 2x upsampling of y [B, h, w, C] --------------------
__device__ __forceinline__ void upsample2x_add(const bf16* __restrict__ y, bf16* __restrict__ x, int B, int h, int w,
                                               int C) {
    const int chunks = C / 8;
    const long long total = (long long)B * 4 * h * w * chunks;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long pix = i / chunks;
        const int ch = (int)(i - pix * chunks);
        const int b = (int)(pix / (4LL * h * w));
        const int t = (int)(pix - (long long)b * 4 * h * w);
        const int yy = t / (2 * w), xx = t % (2 * w);
        uint4* xp = reinterpret_cast<uint4*>(x + (size_t)pix * C + ch * 8);
        *xp = add_bf16x8(*xp, *reinterpret_cast<const uint4*>(y + (((size_t)b * h + yy / 2) * w + xx / 2) * C + ch * 8));
    }
}

}  // namespace hiera_ops
