// Pre- and post-processing around SAM on the GPU, with the reference semantics bit for bit:
//
// * frames: 8-bit RGB (HWC) of any size -> Pillow's antialiased bilinear resize (its fixed-point weights,
//   computed on the host by PillowBilinearResize.passes and uploaded with the frame; 8-bit clipping after
//   each separable pass) -> (x - mean) / std -> zero padding to S x S, written as the encoder's fp32
//   [3, S, S] planes. The last pass is fused with the normalization. SAM 3 (Sam3GpuPreprocessor): the same
//   passes to S x S (no aspect kept, nothing padded), normalized as ((x / 255) - 0.5) / 0.5.
// * masks: low-res logits [N, Lh, Lw] -> PyTorch's bilinear (align_corners=False) to S x S, crop to the
//   resized frame, bilinear to the original H x W -> threshold at 0, bit-packed column-major (COCO RLE
//   order), plus per-mask counts (above +1, above -1, above 0) and the bounding box. The S x S and cropped
//   planes are never built: each output pixel computes the four intermediate values it reads.
//
// Exactness: the resize is integer arithmetic on the same weights as the Java code; the normalization is
// one IEEE subtract and one IEEE divide per value (SAM 3: one more divide first; nvcc's default
// -prec-div=true, and explicit __fdiv_rn / __fsub_rn regardless); the bilinear steps use
// explicit __fmaf_rn / __fmul_rn in the order of MaskPostprocessor (the order of PyTorch's compiled
// kernels), so nvcc's contraction cannot change a rounding.
#pragma once

#include <stdint.h>

namespace image_ops {

constexpr int PRECISION_BITS = 22;   // Pillow's fixed point: 32 - 8 - 2

__device__ __forceinline__ int clip8(int acc) {
    const int v = acc >> PRECISION_BITS;
    return v < 0 ? 0 : (v > 255 ? 255 : v);
}

// One output byte of a Pillow pass. Output pixel o along the pass' axis reads bounds[2o+1] taps from
// bounds[2o] on, weights[o * ksize + i]; `src` points at tap 0 of the pixel's row / column and `step` is
// the distance between taps (3 bytes horizontally, one row vertically).
__device__ __forceinline__ int pillow_tap_sum(const uint8_t* __restrict__ src, int step,
                                              const int* __restrict__ weights, int count) {
    int acc = 1 << (PRECISION_BITS - 1);
    for (int i = 0; i < count; i++) {
        acc += (int)src[(size_t)i * step] * weights[i];
    }
    return clip8(acc);
}

// The value of channel c of pixel (x, y) of a pass' output, reading the pass' input `src` (in_w pixels
// wide). horizontal: rows first_row + y of the input; vertical: all rows, bounds relative to row 0.
__device__ __forceinline__ int pillow_pass_value(const uint8_t* __restrict__ src, int in_w, int horizontal,
                                                 int first_row, const int* __restrict__ bounds,
                                                 const int* __restrict__ weights, int ksize, int x, int y, int c) {
    const size_t row_stride = (size_t)in_w * 3;
    const int o = horizontal ? x : y;
    const int start = bounds[2 * o], count = bounds[2 * o + 1];
    const uint8_t* p = horizontal ? src + (size_t)(y + first_row) * row_stride + (size_t)start * 3 + c
                                  : src + (size_t)start * row_stride + (size_t)x * 3 + c;
    return pillow_tap_sum(p, horizontal ? 3 : (int)row_stride, weights + (size_t)o * ksize, count);
}

// A pass into an 8-bit intermediate [out_h, out_w, 3]; one byte per thread, grid-stride.
__device__ __forceinline__ void pillow_pass_u8(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst,
                                               int in_w, int out_w, int out_h, int horizontal, int first_row,
                                               const int* __restrict__ bounds, const int* __restrict__ weights,
                                               int ksize) {
    const long long total = (long long)out_w * out_h * 3;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)(i % 3);
        const long long pixel = i / 3;
        const int x = (int)(pixel % out_w), y = (int)(pixel / out_w);
        dst[i] = (uint8_t)pillow_pass_value(src, in_w, horizontal, first_row, bounds, weights, ksize, x, y, c);
    }
}

// The encoder input of one frame: fp32 planes [3, S, S] at `out`; pixel (x, y) < (w, h) is the last pass'
// value (or, with horizontal < 0, no pass: the byte of `src` itself, src being w pixels wide), normalized;
// the rest is 0. One value per thread, in the planes' order (coalesced writes), grid-stride.
// kScaleFirst: the byte u is first divided by `scale` (one IEEE divide), then normalized: (u / scale - mean) / std,
// SAM 3's ((u / 255) - 0.5) / 0.5 with the CPU's roundings (a single (u - 127.5) / 127.5 is 1 ulp off for half
// the bytes). Without it, (u - mean) / std (SAM's mean and std are in 8-bit units); `scale` is not read.
template <bool kScaleFirst>
__device__ __forceinline__ void pillow_pass_normalize_f32(const uint8_t* __restrict__ src, float* __restrict__ out,
                                                          int in_w, int w, int h, int S, int horizontal,
                                                          int first_row, const int* __restrict__ bounds,
                                                          const int* __restrict__ weights, int ksize, float scale,
                                                          float mean0, float mean1, float mean2, float std0,
                                                          float std1, float std2) {
    const long long plane = (long long)S * S;
    const long long total = 3 * plane;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)(i / plane);
        const long long rem = i - c * plane;
        const int y = (int)(rem / S), x = (int)(rem - (long long)y * S);
        float v = 0.f;
        if (x < w && y < h) {
            const int u = horizontal < 0
                              ? (int)src[((size_t)y * in_w + x) * 3 + c]
                              : pillow_pass_value(src, in_w, horizontal, first_row, bounds, weights, ksize, x, y, c);
            const float mean = c == 0 ? mean0 : (c == 1 ? mean1 : mean2);
            const float sd = c == 0 ? std0 : (c == 1 ? std1 : std2);
            const float scaled = kScaleFirst ? __fdiv_rn((float)u, scale) : (float)u;
            v = __fdiv_rn(__fsub_rn(scaled, mean), sd);
        }
        out[i] = v;
    }
}

// ---- masks ------------------------------------------------------------------------------------------

// PyTorch's upsample_bilinear2d source index and weights along one axis (align_corners=False, fp32, no
// explicit scale): LinearAxis.java, one output index at a time.
struct Tap {
    int i0, i1;
    float l0, l1;
};

__device__ __forceinline__ Tap linear_tap(int d, int in, int out) {
    Tap t;
    if (in == out) {
        t.i0 = t.i1 = d;
        t.l0 = 1.f;
        t.l1 = 0.f;
        return t;
    }
    const float scale = __fdiv_rn((float)in, (float)out);
    float src = __fmaf_rn(scale, __fadd_rn((float)d, 0.5f), -0.5f);
    if (src < 0.f) src = 0.f;
    int i = (int)floorf(src);
    if (i > in - 1) i = in - 1;
    const float lambda = fminf(fmaxf(__fsub_rn(src, (float)i), 0.f), 1.f);
    t.i0 = i;
    t.i1 = i < in - 1 ? i + 1 : i;
    t.l1 = lambda;
    t.l0 = __fsub_rn(1.f, lambda);
    return t;
}

// h0 * (w0 * a + w1 * b) + h1 * (w0 * c + w1 * d), as fma(h0, fma(w0, a, w1 * b), h1 * fma(w0, c, w1 * d)).
__device__ __forceinline__ float lerp2(float h0, float h1, float w0, float w1, float a, float b, float c, float d) {
    return __fmaf_rn(h0, __fmaf_rn(w0, a, __fmul_rn(w1, b)), __fmul_rn(h1, __fmaf_rn(w0, c, __fmul_rn(w1, d))));
}

// Value (r, c) of the S x S first upscale of one low-res plane (only r < hr, c < wr are ever read).
__device__ __forceinline__ float first_upscale(const float* __restrict__ in, int Lh, int Lw, int S, int r, int c) {
    const Tap ty = linear_tap(r, Lh, S), tx = linear_tap(c, Lw, S);
    const float* top = in + (size_t)ty.i0 * Lw;
    const float* bottom = in + (size_t)ty.i1 * Lw;
    return lerp2(ty.l0, ty.l1, tx.l0, tx.l1, __ldg(top + tx.i0), __ldg(top + tx.i1), __ldg(bottom + tx.i0),
                 __ldg(bottom + tx.i1));
}

// Per-mask statistics, all zero before the launch (one memset): counts, and the box encoded so that
// atomicMax on zero-initialized words gives it (0 = no set pixel).
enum MaskStat { STAT_ABOVE_PLUS1 = 0, STAT_ABOVE_MINUS1 = 1, STAT_AREA = 2, STAT_W_MINUS_MINX = 3,
                STAT_H_MINUS_MINY = 4, STAT_MAXX_PLUS1 = 5, STAT_MAXY_PLUS1 = 6, STAT_WORDS = 8 };

__device__ __forceinline__ unsigned warp_sum(unsigned v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ int warp_max(int v) {
    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Grid: x = CTAs per mask (grid-stride over the mask's 32-bit words, one word per warp and step), y = mask.
// Bit p of a mask's bit stream (bit p % 32 of word p / 32) is pixel (x, y) = (p / H, p % H); the words past
// H * W are written as zeros up to words_per_mask. The blockDim must be a multiple of 32.
__device__ __forceinline__ void mask_postprocess(const float* __restrict__ logits, int Lh, int Lw, int S, int hr,
                                                 int wr, int H, int W, int words_per_mask, uint32_t* __restrict__ bits,
                                                 uint32_t* __restrict__ stats) {
    const int m = blockIdx.y;
    const float* in = logits + (size_t)m * Lh * Lw;
    uint32_t* mbits = bits + (size_t)m * words_per_mask;
    const long long total = (long long)H * W;
    const int lane = threadIdx.x & 31;
    const int warp = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int warps = (int)((gridDim.x * blockDim.x) >> 5);
    unsigned above_plus = 0, above_minus = 0, area = 0;
    int w_minus_minx = 0, h_minus_miny = 0, maxx1 = 0, maxy1 = 0;
    for (int word = warp; word < words_per_mask; word += warps) {
        const long long p = (long long)word * 32 + lane;
        bool set = false;
        if (p < total) {
            const int x = (int)(p / H), y = (int)(p - (long long)x * H);
            const Tap ty = linear_tap(y, hr, H), tx = linear_tap(x, wr, W);
            const float a = first_upscale(in, Lh, Lw, S, ty.i0, tx.i0);
            const float b = first_upscale(in, Lh, Lw, S, ty.i0, tx.i1);
            const float c = first_upscale(in, Lh, Lw, S, ty.i1, tx.i0);
            const float d = first_upscale(in, Lh, Lw, S, ty.i1, tx.i1);
            const float v = lerp2(ty.l0, ty.l1, tx.l0, tx.l1, a, b, c, d);
            above_plus += v > 1.f;
            above_minus += v > -1.f;
            set = v > 0.f;
            if (set) {
                area++;
                w_minus_minx = max(w_minus_minx, W - x);
                h_minus_miny = max(h_minus_miny, H - y);
                maxx1 = max(maxx1, x + 1);
                maxy1 = max(maxy1, y + 1);
            }
        }
        const uint32_t word_bits = __ballot_sync(0xffffffffu, set);
        if (lane == 0) mbits[word] = word_bits;
    }
    above_plus = warp_sum(above_plus);
    above_minus = warp_sum(above_minus);
    area = warp_sum(area);
    w_minus_minx = warp_max(w_minus_minx);
    h_minus_miny = warp_max(h_minus_miny);
    maxx1 = warp_max(maxx1);
    maxy1 = warp_max(maxy1);
    if (lane == 0 && above_minus > 0) {
        uint32_t* s = stats + (size_t)m * STAT_WORDS;
        atomicAdd(s + STAT_ABOVE_PLUS1, above_plus);
        atomicAdd(s + STAT_ABOVE_MINUS1, above_minus);
        if (area > 0) {
            atomicAdd(s + STAT_AREA, area);
            atomicMax(s + STAT_W_MINUS_MINX, (uint32_t)w_minus_minx);
            atomicMax(s + STAT_H_MINUS_MINY, (uint32_t)h_minus_miny);
            atomicMax(s + STAT_MAXX_PLUS1, (uint32_t)maxx1);
            atomicMax(s + STAT_MAXY_PLUS1, (uint32_t)maxy1);
        }
    }
}

// ---- YUV 4:2:0 frames -> 8-bit RGB (HWC), the input of the resize passes ----
// NVDEC's NV12 / P010 / P016 planes (chroma interleaved: cb and cr one sample apart, step 2) and a CPU
// decoder's I420 planes uploaded as they came (separate cb and cr planes, step 1) go through the same code.
// Chroma is upsampled bilinearly from its H.264 default siting (co-sited with even luma columns, midway
// between luma rows); 16-bit samples are scaled to the 8-bit range (value / 256). Limited range expands
// luma 16-235 and chroma 16-240 to full; the matrix is given by kr, kb (BT.709, BT.601, BT.2020).
__device__ __forceinline__ float yuv_sample(const uint8_t* __restrict__ plane, long long pitch, int sixteen,
                                            int x, int y) {
    const uint8_t* row = plane + (long long)y * pitch;
    return sixteen ? (float)((const uint16_t*)row)[x] * (1.0f / 256.0f) : (float)row[x];
}

__device__ __forceinline__ uint8_t to_u8(float v) {
    const float r = rintf(v);
    return (uint8_t)(r < 0.0f ? 0.0f : (r > 255.0f ? 255.0f : r));
}

__device__ __forceinline__ void yuv_to_rgb8(const uint8_t* __restrict__ luma, int luma_pitch,
                                            const uint8_t* __restrict__ cb, const uint8_t* __restrict__ cr,
                                            int chroma_pitch, int chroma_step, int w, int h, int sixteen, float kr,
                                            float kb, int full, uint8_t* __restrict__ rgb) {
    const int cw = (w + 1) / 2, ch = (h + 1) / 2;
    const float kg = 1.0f - kr - kb;
    const float y_scale = full ? 1.0f : 255.0f / 219.0f, c_scale = full ? 1.0f : 255.0f / 224.0f;
    const float y_off = full ? 0.0f : 16.0f;
    const long long total = (long long)w * h;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int x = (int)(i % w), y = (int)(i / w);
        const float Y = (yuv_sample(luma, luma_pitch, sixteen, x, y) - y_off) * y_scale;
        // Chroma position of this pixel, in chroma samples.
        const float cx = 0.5f * x, cy = fmaxf(0.0f, 0.5f * y - 0.25f);
        const int x0 = min((int)cx, cw - 1), y0 = min((int)cy, ch - 1);
        const int x1 = min(x0 + 1, cw - 1), y1 = min(y0 + 1, ch - 1);
        const float fx = cx - x0, fy = cy - y0;
        float uv[2];
        for (int c = 0; c < 2; c++) {
            const uint8_t* plane = c == 0 ? cb : cr;
            const float a = yuv_sample(plane, chroma_pitch, sixteen, chroma_step * x0, y0);
            const float b = yuv_sample(plane, chroma_pitch, sixteen, chroma_step * x1, y0);
            const float d = yuv_sample(plane, chroma_pitch, sixteen, chroma_step * x0, y1);
            const float e = yuv_sample(plane, chroma_pitch, sixteen, chroma_step * x1, y1);
            const float top = a + (b - a) * fx, bottom = d + (e - d) * fx;
            uv[c] = (top + (bottom - top) * fy - 128.0f) * c_scale;
        }
        const float U = uv[0], V = uv[1];
        uint8_t* out = rgb + 3 * i;
        out[0] = to_u8(Y + 2.0f * (1.0f - kr) * V);
        out[1] = to_u8(Y - (2.0f * kb * (1.0f - kb) * U + 2.0f * kr * (1.0f - kr) * V) / kg);
        out[2] = to_u8(Y + 2.0f * (1.0f - kb) * U);
    }
}

}  // namespace image_ops
