// The kernels of SAM 2's memory encoder that are not GEMMs: the mask input (the decoder's low-resolution logits
// upsampled bilinearly to the image size, sigmoid or binarized, x20 - 10), the mask downsampler's stride-2 3x3
// convolutions with their LayerNorm2d + GELU (1 -> 4 -> 16 -> 64 -> 256 channels: too narrow for the GEMMs, fp32
// throughout), and the fuser's depthwise 7x7 convolution. Maps are channels-last.
#pragma once

#include "common.cuh"
#include "gemm_epilogue.cuh"

namespace memory_encoder_ops {

// ---- scaled mask: logits fp32 [B, l, l] -> fp32 [B, S, S] -------------------------------------------------------
// F.interpolate(bilinear, align_corners=False), then sigmoid (binarize != 0: > 0 -> 1 else 0, a mask from prompts),
// then x * 20 - 10 (SAM2Base._encode_new_memory's sigmoid_scale_for_mem_enc / sigmoid_bias_for_mem_enc).

// Where output pixel (oy, ox) of an S-square reads an l-square: its four taps and their weights.
struct BilinearTaps {
    int i00, i01, i10, i11;
    float ly, lx;
};
__device__ __forceinline__ BilinearTaps bilinear_taps(int l, int S, int oy, int ox) {
    const float scale = (float)l / (float)S;
    const float ry = fmaxf(scale * (oy + 0.5f) - 0.5f, 0.f), rx = fmaxf(scale * (ox + 0.5f) - 0.5f, 0.f);
    const int y0 = min((int)floorf(ry), l - 1), x0 = min((int)floorf(rx), l - 1);
    const int y1 = y0 < l - 1 ? y0 + 1 : y0, x1 = x0 < l - 1 ? x0 + 1 : x0;
    return {y0 * l + x0, y0 * l + x1, y1 * l + x0, y1 * l + x1, fminf(fmaxf(ry - y0, 0.f), 1.f),
            fminf(fmaxf(rx - x0, 0.f), 1.f)};
}
__device__ __forceinline__ float bilinear_at(const float* __restrict__ m, const BilinearTaps& t) {
    return (1.f - t.ly) * ((1.f - t.lx) * m[t.i00] + t.lx * m[t.i01]) +
           t.ly * ((1.f - t.lx) * m[t.i10] + t.lx * m[t.i11]);
}

__device__ __forceinline__ void scaled_mask(const float* __restrict__ logits, int binarize, float* __restrict__ out,
                                            int B, int l, int S) {
    const long long total = (long long)B * S * S;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int b = (int)(i / ((long long)S * S));
        const int t = (int)(i - (long long)b * S * S);
        const float v = bilinear_at(logits + (size_t)b * l * l, bilinear_taps(l, S, t / S, t % S));
        const float p = binarize ? (v > 0.f ? 1.f : 0.f) : 1.f / (1.f + __expf(-v));
        out[i] = p * 20.f - 10.f;
    }
}

// ---- SAM 3's memory masks of a concept's tracked objects (Sam3VideoBase._tracker_update_memories) ----------------
// The objects' low-res logits [n, l, l] upsampled as above; the pixel-wise non-overlap rule's shrinkage suppression
// (_suppress_object_pw_area_shrinkage) across all n; then, per object, sigmoid x20 - 10 (MemoryMasks.fromTracked on
// the CPU). First the areas: counts[2k] += pixels where object k's logit is above 0, counts[2k + 1] += pixels where k
// has the highest logit (the first of equals, as torch's argmax) and it is above 0. counts zeroed by the caller;
// each CTA sums in shared memory, then adds its sums once.
constexpr int SHRINK_MAX_OBJECTS = 64;
__device__ __forceinline__ void shrinkage_count(const float* __restrict__ logits, int n, int l, int S,
                                                int* __restrict__ counts) {
    __shared__ int local[2 * SHRINK_MAX_OBJECTS];
    for (int i = threadIdx.x; i < 2 * n; i += blockDim.x) local[i] = 0;
    __syncthreads();
    const long long total = (long long)S * S;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const BilinearTaps t = bilinear_taps(l, S, (int)(i / S), (int)(i % S));
        int best = 0;
        float top = 0.f;
        for (int k = 0; k < n; ++k) {
            const float v = bilinear_at(logits + (size_t)k * l * l, t);
            if (v > 0.f) atomicAdd(&local[2 * k], 1);
            if (k == 0 || v > top) {
                best = k;
                top = v;
            }
        }
        if (top > 0.f) atomicAdd(&local[2 * best + 1], 1);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 2 * n; i += blockDim.x)
        if (local[i] != 0) atomicAdd(&counts[i], local[i]);
}

// Then object k's encoder input [S, S]: its upsampled logits, clamped to at most -10 everywhere when the rule
// suppressed it whole (it kept less than `threshold` of its area; the other objects' pixels stay as they are),
// sigmoid x20 - 10 (exactly +-10 beyond +-18, as the CPU's); presence[0] = 1 when not suppressed and its area is not
// 0, else -1 (the memory encoder's object score: absent adds the no-object embedding).
__device__ __forceinline__ void scaled_mask_shrunk(const float* __restrict__ logits, int k, int l, int S,
                                                   const int* __restrict__ counts, float threshold,
                                                   float* __restrict__ out, float* __restrict__ presence) {
    const int before = counts[2 * k], after = counts[2 * k + 1];
    const bool shrunk = !((float)after / (float)max(before, 1) >= threshold);
    if (blockIdx.x == 0 && threadIdx.x == 0) presence[0] = !shrunk && before > 0 ? 1.f : -1.f;
    const float* m = logits + (size_t)k * l * l;
    const long long total = (long long)S * S;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        float v = bilinear_at(m, bilinear_taps(l, S, (int)(i / S), (int)(i % S)));
        if (shrunk) v = fminf(v, -10.f);
        out[i] = v >= 18.f ? 10.f : v <= -18.f ? -10.f : 20.f / (1.f + expf(-v)) - 10.f;
    }
}

// ---- 3x3 convolution, stride 2, padding 1, fp32 channels-last: x [B, H, W, Cin] -> y [B, H/2, W/2, Cout] ---------
// w fp32 [Cout, Cin, 3, 3] (the Conv2d weight as it is), bias [Cout]. One thread per output value.
__device__ __forceinline__ void conv3x3_s2(const float* __restrict__ x, const float* __restrict__ w,
                                           const float* __restrict__ bias, float* __restrict__ y, int B, int H, int W,
                                           int Cin, int Cout) {
    const int OH = H / 2, OW = W / 2;
    const long long total = (long long)B * OH * OW * Cout;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int co = (int)(i % Cout);
        const long long pix = i / Cout;
        const int b = (int)(pix / ((long long)OH * OW));
        const int t = (int)(pix - (long long)b * OH * OW);
        const int oy = t / OW, ox = t % OW;
        float acc = bias[co];
        const float* wc = w + (size_t)co * Cin * 9;
        for (int ky = 0; ky < 3; ++ky) {
            const int iy = 2 * oy + ky - 1;
            if (iy < 0 || iy >= H) continue;
            for (int kx = 0; kx < 3; ++kx) {
                const int ix = 2 * ox + kx - 1;
                if (ix < 0 || ix >= W) continue;
                const float* src = x + (((size_t)b * H + iy) * W + ix) * Cin;
                for (int ci = 0; ci < Cin; ++ci) acc = fmaf(src[ci], wc[ci * 9 + ky * 3 + kx], acc);
            }
        }
        y[i] = acc;
    }
}

// ---- LayerNorm over the C channels of each pixel, then exact GELU: x (fp32 or bf16) in place; also written as bf16
// to `out_bf16` when it is not null. One warp per pixel, fp32 statistics.
template <typename T>
__device__ __forceinline__ float load_f(const T* p) { return static_cast<float>(p[0]); }
template <>
__device__ __forceinline__ float load_f<bf16>(const bf16* p) { return __bfloat162float(p[0]); }

template <typename T>
__device__ __forceinline__ void layernorm_gelu(T* __restrict__ x, const float* __restrict__ g,
                                               const float* __restrict__ beta, bf16* __restrict__ out_bf16,
                                               long long pixels, int C, float eps) {
    const int lane = threadIdx.x & 31;
    const long long warps = (long long)gridDim.x * (blockDim.x / 32);
    for (long long p = blockIdx.x * (long long)(blockDim.x / 32) + (threadIdx.x >> 5); p < pixels; p += warps) {
        T* row = x + p * C;
        float s = 0.f;
        for (int c = lane; c < C; c += 32) s += load_f(row + c);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        const float mean = s / C;
        float v = 0.f;
        for (int c = lane; c < C; c += 32) {
            const float d = load_f(row + c) - mean;
            v += d * d;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        const float inv = rsqrtf(v / C + eps);
        for (int c = lane; c < C; c += 32) {
            const float r = gemm::gelu_erf((load_f(row + c) - mean) * inv * g[c] + beta[c]);
            row[c] = static_cast<T>(r);
            if (out_bf16 != nullptr) out_bf16[p * C + c] = __float2bfloat16_rn(r);
        }
    }
}

// ---- depthwise KxK convolution, padding K/2, bf16 channels-last: x [B, H, W, C] -> y, fp32 sums --------------
// w fp32 [C, K*K], bias fp32 [C]. One thread per output value (consecutive threads: consecutive channels).
__device__ __forceinline__ void depthwise(const bf16* __restrict__ x, const float* __restrict__ w,
                                          const float* __restrict__ bias, bf16* __restrict__ y, int B, int H, int W,
                                          int C, int K) {
    const int pad = K / 2;
    const long long total = (long long)B * H * W * C;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)(i % C);
        const long long pix = i / C;
        const int b = (int)(pix / ((long long)H * W));
        const int t = (int)(pix - (long long)b * H * W);
        const int oy = t / W, ox = t % W;
        float acc = bias[c];
        const float* wc = w + (size_t)c * K * K;
        for (int ky = 0; ky < K; ++ky) {
            const int iy = oy + ky - pad;
            if (iy < 0 || iy >= H) continue;
            for (int kx = 0; kx < K; ++kx) {
                const int ix = ox + kx - pad;
                if (ix < 0 || ix >= W) continue;
                acc = fmaf(__bfloat162float(x[(((size_t)b * H + iy) * W + ix) * C + c]), wc[ky * K + kx], acc);
            }
        }
        y[i] = __float2bfloat16_rn(acc);
    }
}

}  // namespace memory_encoder_ops
