// The small data-movement kernels around the image encoder's GEMMs: what turns the fp32 input image
// into GEMM rows (patch embedding), adds the absolute position embedding, unfolds the neck's 3x3
// convolution, and turns the final channels-last bf16 tokens into the fp32 channels-first embedding.
//
// All are memory-bound and move 16 bytes (8 bf16) per thread and step; the host (EncoderOpsKernels) checks
// the divisibility each one states.
#pragma once

#include "common.cuh"

namespace encoder_ops {

// ---- patch embedding: image fp32 [B, 3, S, S] -> rows bf16 [B * E * E, 3 * P * P] -------------------
// Row (b, py, px) holds the P x P patch at (py*P, px*P), columns ordered (channel, dy, dx): exactly the
// flattened Conv2d weight [D, 3, P, P], so patch_embed = rows . W^T + bias (one GEMM). One thread writes
// 8 consecutive dx of one (row, channel, dy). Constraints: P % 8 == 0, S == E * P, image 16-byte aligned.
__device__ __forceinline__ void patchify_f32(const float* __restrict__ img, bf16* __restrict__ rows, int B, int S,
                                             int P) {
    const int E = S / P;
    const int per_row = 3 * P * (P / 8);   // 8-wide chunks per output row
    const long long total = (long long)B * E * E * per_row;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long row = i / per_row;
        const int rem = (int)(i - row * per_row);
        const int ch = rem / (P * (P / 8));
        const int rem2 = rem - ch * P * (P / 8);
        const int dy = rem2 / (P / 8), dx = (rem2 - dy * (P / 8)) * 8;
        const int b = (int)(row / (E * E));
        const int t = (int)(row - (long long)b * E * E);
        const int py = t / E, px = t - py * E;
        const float* src = img + (((size_t)b * 3 + ch) * S + (size_t)py * P + dy) * S + (size_t)px * P + dx;
        const float4 a = *reinterpret_cast<const float4*>(src);
        const float4 c = *reinterpret_cast<const float4*>(src + 4);
        uint4 v;
        v.x = pack_bf16x2(a.x, a.y);
        v.y = pack_bf16x2(a.z, a.w);
        v.z = pack_bf16x2(c.x, c.y);
        v.w = pack_bf16x2(c.z, c.w);
        *reinterpret_cast<uint4*>(rows + (size_t)row * (3 * P * P) + (size_t)(ch * P + dy) * P + dx) = v;
    }
}

// ---- x[i] += add[i % period] for bf16 x (the absolute position embedding of every image) -------------
// fp32 sum, one rounding. Constraints: total % 8 == 0, period % 8 == 0, 16-byte aligned.
__device__ __forceinline__ void add_periodic_bf16(bf16* __restrict__ x, const bf16* __restrict__ add, long long total,
                                                  long long period) {
    for (long long i = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 8; i < total;
         i += (long long)gridDim.x * blockDim.x * 8) {
        *reinterpret_cast<uint4*>(x + i) = add_bf16x8(*reinterpret_cast<const uint4*>(x + i),
                                                      *reinterpret_cast<const uint4*>(add + (i % period)));
    }
}

// ---- 3x3 convolution, padding 1, stride 1 or 2, as rows for a GEMM ------------------------------------------
// x channels-last [B, H, W, C] -> rows [B * OH * OW, 9 * C] (OH = (H - 1) / stride + 1, the same for W), columns
// ordered (ky, kx, c): the host re-lays the Conv2d weight [O, C, 3, 3] out as [O, 3, 3, C] to match, so every tap is
// a contiguous C-run copy. Taps outside the image are zeros. Constraints: C % 8 == 0, 16-byte aligned.
__device__ __forceinline__ void im2col3x3_bf16(const bf16* __restrict__ x, bf16* __restrict__ rows, int B, int H,
                                               int W, int C, int stride) {
    const int chunks = C / 8;
    const int OH = (H - 1) / stride + 1, OW = (W - 1) / stride + 1;
    const long long total = (long long)B * OH * OW * 9 * chunks;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long pix = i / (9 * chunks);
        const int rem = (int)(i - pix * 9 * chunks);
        const int tap = rem / chunks, ch = rem - tap * chunks;
        const int b = (int)(pix / ((long long)OH * OW));
        const int t = (int)(pix - (long long)b * OH * OW);
        const int y = (t / OW) * stride + tap / 3 - 1, xx = (t % OW) * stride + tap % 3 - 1;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (y >= 0 && y < H && xx >= 0 && xx < W)
            v = *reinterpret_cast<const uint4*>(x + (((size_t)b * H + y) * W + xx) * C + ch * 8);
        *reinterpret_cast<uint4*>(rows + (size_t)pix * 9 * C + (size_t)tap * C + ch * 8) = v;
    }
}

// ---- 2x2 stride-2 transposed convolution, the scatter after its GEMM ------------------------------------------
// The GEMM gives, per input pixel, the four taps' outputs side by side: y [B * H * W, 4 * C], columns (dy, dx, c)
// (the host lays the ConvTranspose2d weight [I, C, 2, 2] out as tap-major rows [4 * C, I], bias and activation in the
// GEMM's epilogue). Each tap's C-run goes to its pixel of out [B, 2H, 2W, C]. Constraints: C % 8 == 0, 16-byte aligned.
__device__ __forceinline__ void convt2x2_scatter_bf16(const bf16* __restrict__ y, bf16* __restrict__ out, int B,
                                                      int H, int W, int C) {
    const int chunks = C / 8;
    const long long total = (long long)B * H * W * 4 * chunks;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long pix = i / (4 * chunks);
        const int rem = (int)(i - pix * 4 * chunks);
        const int tap = rem / chunks, ch = rem - tap * chunks;
        const int b = (int)(pix / ((long long)H * W));
        const int t = (int)(pix - (long long)b * H * W);
        const int oy = 2 * (t / W) + (tap >> 1), ox = 2 * (t % W) + (tap & 1);
        *reinterpret_cast<uint4*>(out + (((size_t)b * 2 * H + oy) * 2 * W + ox) * C + ch * 8) =
            *reinterpret_cast<const uint4*>(y + (size_t)pix * 4 * C + (size_t)tap * C + ch * 8);
    }
}

// ---- tokens bf16 [B, T, C] -> fp32 [B, C, T] (the channels-first image embedding) ---------------------
// 32 x 32 tiles through shared memory so both the reads and the writes are coalesced.
// Block (32, 8); grid (ceil(T/32), ceil(C/32), B).
__device__ __forceinline__ void tokens_to_chw_f32(const bf16* __restrict__ y, float* __restrict__ out, int T, int C) {
    __shared__ float tile[32][33];
    const int b = blockIdx.z;
    const int t0 = blockIdx.x * 32, c0 = blockIdx.y * 32;
    const bf16* src = y + (size_t)b * T * C;
    float* dst = out + (size_t)b * T * C;
    for (int r = threadIdx.y; r < 32; r += 8) {
        const int t = t0 + r, c = c0 + threadIdx.x;
        tile[r][threadIdx.x] = (t < T && c < C) ? __bfloat162float(src[(size_t)t * C + c]) : 0.f;
    }
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += 8) {
        const int c = c0 + r, t = t0 + threadIdx.x;
        if (t < T && c < C) dst[(size_t)c * T + t] = tile[threadIdx.x][r];
    }
}

}  // namespace encoder_ops
