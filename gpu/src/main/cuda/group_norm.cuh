// GroupNorm over channels-last x [pixels, C] of one image, G groups of C / G channels, optionally followed by ReLU
// (SAM 3's pixel decoder: 3x3 convolution -> GroupNorm(8) -> ReLU). A group's statistics run over pixels x C / G
// values (2.6 M at 288x288x256), far more than one CTA should reduce, so two kernels:
//   partials: CTA (b, g) of a (PARTIAL_CTAS, G) grid sums its stride of group g's values and their squares in double
//             into partials[(g * PARTIAL_CTAS + b) * 2 + {0, 1}];
//   apply:    every CTA first reduces the G groups' partials (one warp a group) to their mean and 1 / sqrt(var + eps),
//             the variance as E[x^2] - mean^2 in double as our CPU reference computes it, then normalizes its
//             stride of x in place: (x - mean) * rstd * gamma[c] + beta[c], ReLU when asked; 8 channels a thread,
//             each with its own group (a group may be narrower than 8 channels).
// bf16 x, fp32 gamma / beta. Constraints (checked on the host): C % G == 0, C % 8 == 0, G <= 32, 16-byte aligned.
#pragma once

#include "common.cuh"

namespace group_norm {

constexpr int PARTIAL_CTAS = 64;
constexpr int THREADS = 256;

__device__ __forceinline__ double warp_sum_d(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ void partials_bf16(const bf16* __restrict__ x, double* __restrict__ partials,
                                              long long pixels, int C, int G) {
    const int g = blockIdx.y, per = C / G;
    const long long n = pixels * per;
    double s = 0.0, sq = 0.0;
    for (long long i = blockIdx.x * (long long)THREADS + threadIdx.x; i < n; i += (long long)PARTIAL_CTAS * THREADS) {
        const long long p = i / per;
        const double v = __bfloat162float(x[p * C + g * per + (int)(i - p * per)]);
        s += v;
        sq += v * v;
    }
    __shared__ double sums[THREADS / 32][2];
    s = warp_sum_d(s);
    sq = warp_sum_d(sq);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        sums[warp][0] = s;
        sums[warp][1] = sq;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double ts = 0.0, tq = 0.0;
        for (int w = 0; w < THREADS / 32; ++w) {
            ts += sums[w][0];
            tq += sums[w][1];
        }
        partials[(g * PARTIAL_CTAS + blockIdx.x) * 2] = ts;
        partials[(g * PARTIAL_CTAS + blockIdx.x) * 2 + 1] = tq;
    }
}

__device__ __forceinline__ void apply_bf16(bf16* __restrict__ x, const double* __restrict__ partials,
                                           const float* __restrict__ gamma, const float* __restrict__ beta,
                                           long long pixels, int C, int G, float eps, int relu) {
    __shared__ float mean[32], rstd[32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, per = C / G;
    for (int g = warp; g < G; g += THREADS / 32) {
        double s = 0.0, sq = 0.0;
        for (int b = lane; b < PARTIAL_CTAS; b += 32) {
            s += partials[(g * PARTIAL_CTAS + b) * 2];
            sq += partials[(g * PARTIAL_CTAS + b) * 2 + 1];
        }
        s = warp_sum_d(s);
        sq = warp_sum_d(sq);
        if (lane == 0) {
            const double n = (double)pixels * per, m = s / n;
            const double var = fmax(sq / n - m * m, 0.0);
            mean[g] = (float)m;
            rstd[g] = (float)(1.0 / sqrt(var + (double)eps));
        }
    }
    __syncthreads();
    const long long chunks = pixels * C / 8;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < chunks;
         i += (long long)gridDim.x * blockDim.x) {
        const int c0 = (int)((i * 8) % C);
        uint4 v = *reinterpret_cast<const uint4*>(x + i * 8);
        uint32_t* w = reinterpret_cast<uint32_t*>(&v);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const float2 p = unpack_bf16x2(w[k]);
            const int c = c0 + 2 * k, ga = c / per, gb = (c + 1) / per;
            float a = (p.x - mean[ga]) * rstd[ga] * gamma[c] + beta[c];
            float b = (p.y - mean[gb]) * rstd[gb] * gamma[c + 1] + beta[c + 1];
            if (relu) {
                a = fmaxf(a, 0.f);
                b = fmaxf(b, 0.f);
            }
            w[k] = pack_bf16x2(a, b);
        }
        *reinterpret_cast<uint4*>(x + i * 8) = v;
    }
}

}  // namespace group_norm
