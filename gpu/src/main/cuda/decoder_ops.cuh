// The kernels of SAM's prompt encoder and mask decoder that the image encoder's GEMM / LayerNorm do not
// cover, batched over P prompt sets of one image.
//
// Precision split (see CudaMaskDecoder): the image side (keys [P, T, C], T = E*E, and everything of that
// size: projections, upscaling) is bf16 storage with fp32 math, through the bf16 GEMM of gemm.cuh; the
// token side (queries [P, nq, C]: a few rows per prompt set) is fp32 throughout, through the small fp32
// kernels here. Every kernel is a plain grid-stride or one-warp-per-row loop: the decoder's work is small
// and latency-bound, so these favour few launches and exact arithmetic over peak throughput.
// SAM 2.1's decoder (CudaSam2MaskDecoder) runs them too: the upscaler's kernels take its high-resolution
// features as optional skip inputs; its output selection is in sam2_decoder_ops.cuh.
#pragma once

#include <math_constants.h>

#include "common.cuh"

namespace decoder_ops {

__device__ __forceinline__ float ld(const float* p) { return *p; }
__device__ __forceinline__ float ld(const bf16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ void st(float* p, float v) { *p = v; }
__device__ __forceinline__ void st(bf16* p, float v) { *p = __float2bfloat16_rn(v); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Exact GELU (nn.GELU default), in full precision: the decoder's few GELUs are not worth an approximation.
__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

// SAM's random Fourier feature of a point in [0,1]^2, channel c of C = 2 * half: sin for c < half, cos
// after. Rounded as the fp32 reference computes it (no FMA contraction).
__device__ __forceinline__ float fourier(float x, float y, const float* gauss, int half, int c) {
    const int k = c < half ? c : c - half;
    const float cx = __fsub_rn(__fmul_rn(2.f, x), 1.f), cy = __fsub_rn(__fmul_rn(2.f, y), 1.f);
    const float v = __fmul_rn(6.28318530717958647f, __fadd_rn(__fmul_rn(cx, gauss[k]), __fmul_rn(cy, gauss[half + k])));
    return c < half ? sinf(v) : cosf(v);
}

// ---- prompt tokens: tokens fp32 [P, nq, C], nq = 1 + mt + ns ----------------------------------------------
// Rows 0..mt: the IoU token and the mask tokens (out_tokens [1 + mt, C]); then the ns sparse prompts of each
// set: coords [P, ns, 2] already normalised to [0, 1], codes [P, ns]: -1 not_a_point_embed alone, 0..3
// Fourier feature + point_embeddings[code] (0/1 labels, 2/3 box corners), 4 the Fourier feature alone.
__device__ __forceinline__ void prompt_tokens(const float* __restrict__ coords, const int* __restrict__ codes,
                                              const float* __restrict__ out_tokens, const float* __restrict__ gauss,
                                              const float* __restrict__ point_embed, const float* __restrict__ not_a_point,
                                              float* __restrict__ tokens, int P, int mt, int ns, int C) {
    const int nq = 1 + mt + ns;
    const long long total = (long long)P * nq * C;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)(i % C);
        const long long row = i / C;
        const int r = (int)(row % nq), p = (int)(row / nq);
        float v;
        if (r <= mt) {
            v = out_tokens[r * C + c];
        } else {
            const int s = p * ns + (r - 1 - mt);
            const int code = codes[s];
            if (code == -1) {
                v = not_a_point[c];
            } else {
                v = fourier(coords[2 * s], coords[2 * s + 1], gauss, C / 2, c);
                if (code >= 0 && code < 4) v = __fadd_rn(v, point_embed[code * C + c]);
            }
        }
        tokens[i] = v;
    }
}

// ---- dense positional encoding of the E x E grid, bf16 [E*E, C] (get_dense_pe, channels-last) ------------
__device__ __forceinline__ void dense_pe(const float* __restrict__ gauss, bf16* __restrict__ pe, int E, int C) {
    const long long total = (long long)E * E * C;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)(i % C);
        const int t = (int)(i / C);
        const float x = __fdiv_rn(t % E + 0.5f, (float)E), y = __fdiv_rn(t / E + 0.5f, (float)E);
        pe[i] = __float2bfloat16_rn(fourier(x, y, gauss, C / 2, c));
    }
}

// ---- keys = image embedding + no_mask_embed, bf16 [P, T, C] ---------------------------------------------
// emb fp32 channels-first [C, T]. 32 x 32 tiles through shared memory (coalesced both ways).
// Block (32, 8); grid (ceil(T/32), ceil(C/32), P).
__device__ __forceinline__ void embed_keys(const float* __restrict__ emb, const float* __restrict__ no_mask,
                                           bf16* __restrict__ keys, int T, int C) {
    __shared__ float tile[32][33];
    const int t0 = blockIdx.x * 32, c0 = blockIdx.y * 32;
    for (int r = threadIdx.y; r < 32; r += 8) {
        const int c = c0 + r, t = t0 + threadIdx.x;
        tile[r][threadIdx.x] = (t < T && c < C) ? emb[(size_t)c * T + t] + no_mask[c] : 0.f;
    }
    __syncthreads();
    bf16* dst = keys + (size_t)blockIdx.z * T * C;
    for (int r = threadIdx.y; r < 32; r += 8) {
        const int t = t0 + r, c = c0 + threadIdx.x;
        if (t < T && c < C) dst[(size_t)t * C + c] = __float2bfloat16_rn(tile[threadIdx.x][r]);
    }
}

// ---- keys of the sets with a mask prompt: image embedding + the downscaled mask ------------------------
// For set p with mask_slot[p] >= 0 the dense prompt is the mask downscaler applied to masks[mask_slot[p]]
// (fp32 [L, L], L = 4E); sets without one are left alone. The downscaler per output cell: conv 2x2/2
// (1 -> MI/4) on each of the four 2x2 blocks of the cell's 4x4 patch, LayerNorm2d, GELU, conv 2x2/2
// (MI/4 -> MI), LayerNorm2d, GELU, conv 1x1 (MI -> C). One thread per (p, t); weights fp32:
// w1 [MI/4, 1, 2, 2], w2 [MI, MI/4, 2, 2], w3 [C, MI], with biases and LayerNorm gamma / beta.
constexpr int MAX_MI = 64;

__device__ __forceinline__ void layernorm_gelu_inplace(float* v, int n, const float* g, const float* b, float eps) {
    float mean = 0.f;
    for (int i = 0; i < n; ++i) mean += v[i];
    mean /= n;
    float var = 0.f;
    for (int i = 0; i < n; ++i) var += (v[i] - mean) * (v[i] - mean);
    const float rstd = rsqrtf(var / n + eps);
    for (int i = 0; i < n; ++i) v[i] = gelu((v[i] - mean) * rstd * g[i] + b[i]);
}

__device__ __forceinline__ void mask_keys(const float* __restrict__ emb, const float* __restrict__ masks,
                                          const int* __restrict__ mask_slot, const float* __restrict__ w1,
                                          const float* __restrict__ b1, const float* __restrict__ g1,
                                          const float* __restrict__ be1, const float* __restrict__ w2,
                                          const float* __restrict__ b2, const float* __restrict__ g2,
                                          const float* __restrict__ be2, const float* __restrict__ w3,
                                          const float* __restrict__ b3, bf16* __restrict__ keys, int P, int E, int C,
                                          int MI, float eps) {
    const int T = E * E, L = 4 * E, MQ = MI / 4;
    const long long total = (long long)P * T;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int t = (int)(i % T), p = (int)(i / T);
        const int slot = mask_slot[p];
        if (slot < 0) continue;
        bf16* out = keys + i * C;
        const float* m = masks + (size_t)slot * L * L;
        const int oy = t / E, ox = t % E;
        float h2[MAX_MI];
        for (int o = 0; o < MI; ++o) h2[o] = b2[o];
        for (int sub = 0; sub < 4; ++sub) {   // the four stage-1 cells of this output cell
            const int sy = 2 * oy + sub / 2, sx = 2 * ox + sub % 2;
            float h1[MAX_MI / 4];
            for (int o = 0; o < MQ; ++o) {
                float a = b1[o];
                for (int k = 0; k < 4; ++k) a += w1[o * 4 + k] * m[(size_t)(2 * sy + k / 2) * L + 2 * sx + k % 2];
                h1[o] = a;
            }
            layernorm_gelu_inplace(h1, MQ, g1, be1, eps);
            for (int o = 0; o < MI; ++o) {
                float a = 0.f;
                for (int ci = 0; ci < MQ; ++ci) a += w2[(o * MQ + ci) * 4 + sub] * h1[ci];
                h2[o] += a;
            }
        }
        layernorm_gelu_inplace(h2, MI, g2, be2, eps);
        for (int c = 0; c < C; ++c) {
            float a = b3[c];
            for (int k = 0; k < MI; ++k) a += w3[c * MI + k] * h2[k];
            out[c] = __float2bfloat16_rn(emb[(size_t)c * T + t] + a);
        }
    }
}

// ---- y = x + add[i % period], bf16, out of place (keys + dense PE of every set) -------------------------
__device__ __forceinline__ void add_periodic_to_bf16(const bf16* __restrict__ x, const bf16* __restrict__ add,
                                                     bf16* __restrict__ y, long long total, long long period) {
    for (long long i = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 8; i < total;
         i += (long long)gridDim.x * blockDim.x * 8) {
        *reinterpret_cast<uint4*>(y + i) = add_bf16x8(*reinterpret_cast<const uint4*>(x + i),
                                                      *reinterpret_cast<const uint4*>(add + (i % period)));
    }
}

// ---- fp32 elementwise y = a + b -------------------------------------------------------------------------
__device__ __forceinline__ void add_f32(const float* a, const float* b, float* y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = a[i] + b[i];
}

// ---- fp32 Linear on few rows: Y[m, n] = X[m, :] . W[n, :] (+bias[n]) (relu) (+R[m, n]) ---------------------
// X rows ldx apart (strided token rows: the hypernetworks and the IoU head read one token per set), Y and
// R rows ldy apart; R may alias Y, X may not. Warp w computes column n = w % N of the LR rows from LR (w / N): its
// lanes stride over K (W's row and the X rows read coalesced, no barrier), then a warp sum per row. A prompt set has
// few rows, so the cost is the K loop's latency, not reuse of W (bench/results/2026-12-03-h200-sam2-parts.md).
constexpr int LR = 8;

__device__ __forceinline__ void linear_f32(const float* __restrict__ X, int ldx, const float* __restrict__ W,
                                           const float* __restrict__ bias, const float* R, float* Y, int ldy, int M,
                                           int N, int K, int relu) {
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    const int n = (int)(warp % N);
    const int row0 = (int)(warp / N) * LR;
    if (row0 >= M) return;   // the whole warp
    const int rows = min(LR, M - row0);
    const float* w = W + (size_t)n * K;
    const float* x = X + (size_t)row0 * ldx;
    float acc[LR];
#pragma unroll
    for (int r = 0; r < LR; ++r) acc[r] = 0.f;
    for (int k = lane; k < K; k += 32) {
        const float wk = w[k];
#pragma unroll
        for (int r = 0; r < LR; ++r)
            if (r < rows) acc[r] = fmaf(x[(size_t)r * ldx + k], wk, acc[r]);
    }
    float mine = 0.f;   // lane r keeps row r's sum
#pragma unroll
    for (int r = 0; r < LR; ++r) {
        const float sum = warp_sum(acc[r]);
        if (lane == r) mine = sum;
    }
    if (lane < rows) {
        const int row = row0 + lane;
        if (bias != nullptr) mine += bias[n];
        if (relu) mine = fmaxf(mine, 0.f);
        if (R != nullptr) mine += R[(size_t)row * ldy + n];
        Y[(size_t)row * ldy + n] = mine;
    }
}

// ---- fp32 LayerNorm over the last dim, one warp per row, in place allowed ------------------------------
__device__ __forceinline__ void layernorm_f32(const float* x, const float* __restrict__ g, const float* __restrict__ b,
                                              float* y, int rows, int C, float eps) {
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;
    const float* xr = x + (size_t)row * C;
    float s = 0.f;
    for (int c = lane; c < C; c += 32) s += xr[c];
    const float mean = warp_sum(s) / C;
    float q = 0.f;
    for (int c = lane; c < C; c += 32) q += (xr[c] - mean) * (xr[c] - mean);
    const float rstd = rsqrtf(warp_sum(q) / C + eps);
    float* yr = y + (size_t)row * C;
    for (int c = lane; c < C; c += 32) yr[c] = (xr[c] - mean) * rstd * g[c] + b[c];
}

// ---- attention of the mask decoder: out = softmax(q . k^T / sqrt(hd)) . v per head ----------------------
// Batched: set b's queries are rows b*nq.., its keys / values rows b*nk..; row strides ldq / ldk / ldv / ldo
// (elements), head h at column h*hd. fp32 scores and softmax (exact expf), HD = a bound on hd (registers).
// Two schedules: one CTA of WARP_SHARES warps per (set, head, query) with the keys split over its warps' lanes and
// the shares merged at the end (many keys, few queries: tokens to image, a set's ~7 tokens over 4,096 keys), one
// thread per (set, head, query) (few keys: token self attention, image to tokens).
constexpr int WARP_SHARES = 8;   // warps per CTA of the "warp" schedule: 256 threads
// The "warp" schedule's end: the CTA's warps each hold one share of the keys (its running max m and sum l, and acc[d]
// summed over its lanes, relative to m, in every lane); merged through shared memory, the output row written by
// warp 0's lanes d < hd.
template <int HD, typename TO>
__device__ __forceinline__ void merge_warp_shares(float m, float l, const float (&acc)[HD], int hd, TO* orow) {
    __shared__ float sm[WARP_SHARES], sl[WARP_SHARES], sacc[WARP_SHARES][HD];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) {
        sm[warp] = m;
        sl[warp] = l;
#pragma unroll
        for (int d = 0; d < HD; ++d) sacc[warp][d] = acc[d];
    }
    __syncthreads();
    if (warp == 0 && lane < hd) {
        float mx = -CUDART_INF_F;
#pragma unroll
        for (int w = 0; w < WARP_SHARES; ++w) mx = fmaxf(mx, sm[w]);
        float den = 0.f, num = 0.f;
#pragma unroll
        for (int w = 0; w < WARP_SHARES; ++w) {
            if (sm[w] == -CUDART_INF_F) continue;   // a share with no key
            const float f = expf(sm[w] - mx);
            den += sl[w] * f;
            num += sacc[w][lane] * f;
        }
        st(orow + lane, num / den);
    }
}

template <int HD, typename TQ, typename TK, typename TO>
__device__ __forceinline__ void attention_warp(const TQ* __restrict__ Q, int ldq, const TK* __restrict__ K, int ldk,
                                               const TK* __restrict__ V, int ldv, TO* __restrict__ O, int ldo, int B,
                                               int nq, int nk, int heads, int hd, float divisor) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long w = blockIdx.x;   // (set, head, query)
    const int i = (int)(w % nq), h = (int)((w / nq) % heads), b = (int)(w / ((long long)nq * heads));
    float q[HD], acc[HD];
    const TQ* qr = Q + ((size_t)b * nq + i) * ldq + h * hd;
#pragma unroll
    for (int d = 0; d < HD; ++d) {
        q[d] = d < hd ? ld(qr + d) : 0.f;
        acc[d] = 0.f;
    }
    float m = -CUDART_INF_F, l = 0.f;
    for (int j = warp * 32 + lane; j < nk; j += 32 * WARP_SHARES) {
        const TK* kr = K + ((size_t)b * nk + j) * ldk + h * hd;
        const TK* vr = V + ((size_t)b * nk + j) * ldv + h * hd;
        float s = 0.f;
#pragma unroll
        for (int d = 0; d < HD; ++d)
            if (d < hd) s += q[d] * ld(kr + d);
        s = s / divisor;
        const float mn = fmaxf(m, s);
        const float corr = expf(m - mn), e = expf(s - mn);
        l = l * corr + e;
#pragma unroll
        for (int d = 0; d < HD; ++d)
            if (d < hd) acc[d] = acc[d] * corr + e * ld(vr + d);
        m = mn;
    }
    const float mw = warp_max(m);
    const float f = m == -CUDART_INF_F ? 0.f : expf(m - mw);
    const float lw = warp_sum(l * f);
#pragma unroll
    for (int d = 0; d < HD; ++d) acc[d] = warp_sum(acc[d] * f);
    merge_warp_shares<HD>(mw, lw, acc, hd, O + ((size_t)b * nq + i) * ldo + h * hd);
}

template <int HD, typename TQ, typename TK, typename TO>
__device__ __forceinline__ void attention_thread(const TQ* __restrict__ Q, int ldq, const TK* __restrict__ K, int ldk,
                                                 const TK* __restrict__ V, int ldv, TO* __restrict__ O, int ldo, int B,
                                                 int nq, int nk, int heads, int hd, float divisor) {
    const long long total = (long long)B * heads * nq;
    for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < total;
         w += (long long)gridDim.x * blockDim.x) {
        // Consecutive threads take consecutive queries of one head: coalesced-ish q reads, shared k / v rows.
        const int i = (int)(w % nq), h = (int)((w / nq) % heads), b = (int)(w / ((long long)nq * heads));
        float q[HD], acc[HD];
        const TQ* qr = Q + ((size_t)b * nq + i) * ldq + h * hd;
#pragma unroll
        for (int d = 0; d < HD; ++d) {
            q[d] = d < hd ? ld(qr + d) : 0.f;
            acc[d] = 0.f;
        }
        float m = -CUDART_INF_F, l = 0.f;
        for (int j = 0; j < nk; ++j) {
            const TK* kr = K + ((size_t)b * nk + j) * ldk + h * hd;
            const TK* vr = V + ((size_t)b * nk + j) * ldv + h * hd;
            float s = 0.f;
#pragma unroll
            for (int d = 0; d < HD; ++d)
                if (d < hd) s += q[d] * ld(kr + d);
            s = s / divisor;
            const float mn = fmaxf(m, s);
            const float corr = expf(m - mn), e = expf(s - mn);
            l = l * corr + e;
#pragma unroll
            for (int d = 0; d < HD; ++d)
                if (d < hd) acc[d] = acc[d] * corr + e * ld(vr + d);
            m = mn;
        }
        TO* orow = O + ((size_t)b * nq + i) * ldo + h * hd;
#pragma unroll
        for (int d = 0; d < HD; ++d)
            if (d < hd) st(orow + d, acc[d] / l);
    }
}

// ---- the same two schedules with whole-row vector loads, for hd == HD in {16, 32, 64} -----------------------
// Rows are read and written as 16-byte vectors (8 bf16 / 4 fp32): the host checks that every row start is
// 16-byte aligned. Two keys per step give the loads of the next key something to overlap with.
__device__ __forceinline__ void ld_row(const bf16* __restrict__ p, float* v, int n) {
    for (int i = 0; i < n; i += 8) {
        const uint4 raw = *reinterpret_cast<const uint4*>(p + i);
        const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const float2 f = unpack_bf16x2(w[k]);
            v[i + 2 * k] = f.x;
            v[i + 2 * k + 1] = f.y;
        }
    }
}

__device__ __forceinline__ void ld_row(const float* __restrict__ p, float* v, int n) {
    for (int i = 0; i < n; i += 4) {
        const float4 f = *reinterpret_cast<const float4*>(p + i);
        v[i] = f.x;
        v[i + 1] = f.y;
        v[i + 2] = f.z;
        v[i + 3] = f.w;
    }
}

__device__ __forceinline__ void st_row(bf16* p, const float* v, int n) {
    for (int i = 0; i < n; i += 8) {
        uint4 raw;
        raw.x = pack_bf16x2(v[i], v[i + 1]);
        raw.y = pack_bf16x2(v[i + 2], v[i + 3]);
        raw.z = pack_bf16x2(v[i + 4], v[i + 5]);
        raw.w = pack_bf16x2(v[i + 6], v[i + 7]);
        *reinterpret_cast<uint4*>(p + i) = raw;
    }
}

__device__ __forceinline__ void st_row(float* p, const float* v, int n) {
    for (int i = 0; i < n; i += 4) *reinterpret_cast<float4*>(p + i) = make_float4(v[i], v[i + 1], v[i + 2], v[i + 3]);
}

// Online-softmax update of (m, l, acc) with key row k and value row v.
template <int HD, typename TK>
__device__ __forceinline__ void attend_one(const float* q, const TK* kr, const TK* vr, float divisor, float& m, float& l,
                                           float* acc) {
    float kv[HD];
#pragma unroll
    for (int i = 0; i < HD / 8; ++i) ld_row(kr + 8 * i, kv + 8 * i, 8);
    float s = 0.f;
#pragma unroll
    for (int d = 0; d < HD; ++d) s += q[d] * kv[d];
    s = s / divisor;
#pragma unroll
    for (int i = 0; i < HD / 8; ++i) ld_row(vr + 8 * i, kv + 8 * i, 8);
    const float mn = fmaxf(m, s);
    const float corr = expf(m - mn), e = expf(s - mn);
    l = l * corr + e;
#pragma unroll
    for (int d = 0; d < HD; ++d) acc[d] = acc[d] * corr + e * kv[d];
    m = mn;
}

template <int HD, typename TQ, typename TK, typename TO>
__device__ __forceinline__ void attention_warp_vec(const TQ* __restrict__ Q, int ldq, const TK* __restrict__ K, int ldk,
                                                   const TK* __restrict__ V, int ldv, TO* __restrict__ O, int ldo,
                                                   int B, int nq, int nk, int heads, float divisor) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long w = blockIdx.x;   // (set, head, query)
    const int i = (int)(w % nq), h = (int)((w / nq) % heads), b = (int)(w / ((long long)nq * heads));
    float q[HD], acc[HD];
#pragma unroll
    for (int k = 0; k < HD / 8; ++k) ld_row(Q + ((size_t)b * nq + i) * ldq + h * HD + 8 * k, q + 8 * k, 8);
#pragma unroll
    for (int d = 0; d < HD; ++d) acc[d] = 0.f;
    float m = -CUDART_INF_F, l = 0.f;
    const TK* kb = K + (size_t)b * nk * ldk + h * HD;
    const TK* vb = V + (size_t)b * nk * ldv + h * HD;
#pragma unroll 2
    for (int j = warp * 32 + lane; j < nk; j += 32 * WARP_SHARES)
        attend_one<HD>(q, kb + (size_t)j * ldk, vb + (size_t)j * ldv, divisor, m, l, acc);
    const float mw = warp_max(m);
    const float f = m == -CUDART_INF_F ? 0.f : expf(m - mw);
    const float lw = warp_sum(l * f);
#pragma unroll
    for (int d = 0; d < HD; ++d) acc[d] = warp_sum(acc[d] * f);
    merge_warp_shares<HD>(mw, lw, acc, HD, O + ((size_t)b * nq + i) * ldo + h * HD);
}

template <int HD, typename TQ, typename TK, typename TO>
__device__ __forceinline__ void attention_thread_vec(const TQ* __restrict__ Q, int ldq, const TK* __restrict__ K,
                                                     int ldk, const TK* __restrict__ V, int ldv, TO* __restrict__ O,
                                                     int ldo, int B, int nq, int nk, int heads, float divisor) {
    const long long total = (long long)B * heads * nq;
    for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < total;
         w += (long long)gridDim.x * blockDim.x) {
        const int i = (int)(w % nq), h = (int)((w / nq) % heads), b = (int)(w / ((long long)nq * heads));
        float q[HD], acc[HD];
#pragma unroll
        for (int k = 0; k < HD / 8; ++k) ld_row(Q + ((size_t)b * nq + i) * ldq + h * HD + 8 * k, q + 8 * k, 8);
#pragma unroll
        for (int d = 0; d < HD; ++d) acc[d] = 0.f;
        float m = -CUDART_INF_F, l = 0.f;
        const TK* kb = K + (size_t)b * nk * ldk + h * HD;
        const TK* vb = V + (size_t)b * nk * ldv + h * HD;
        for (int j = 0; j < nk; ++j) attend_one<HD>(q, kb + (size_t)j * ldk, vb + (size_t)j * ldv, divisor, m, l, acc);
#pragma unroll
        for (int d = 0; d < HD; ++d) acc[d] /= l;
#pragma unroll
        for (int k = 0; k < HD / 8; ++k) st_row(O + ((size_t)b * nq + i) * ldo + h * HD + 8 * k, acc + 8 * k, 8);
    }
}

// ---- ConvTranspose2d(k=2, s=2) scatter (+ skip) + LayerNorm2d + GELU -------------------------------------
// pp bf16 [B, H, W, 4*Co] is the per-pixel GEMM output, tap-major: column (dy*2 + dx)*Co + o (the host lays
// the weight rows out so), bias included; writes y bf16 [B, 2H, 2W, Co] = GELU(LayerNorm over Co). One warp
// per output pixel, lanes over the channels (contiguous both ways). Co <= 32 * UP_MAXV.
// SAM 2 adds the high-resolution features before the LayerNorm: skip bf16 [frames, 2H, 2W, Co] (conv_s1),
// set n reading frame frame_of_set[n]; a frame index outside [0, frames) writes NaN (never a read past the
// buffer). skip == nullptr (SAM) adds nothing.
constexpr int UP_MAXV = 8;

__device__ __forceinline__ void upscale_ln_gelu(const bf16* __restrict__ pp, const bf16* __restrict__ g,
                                                const bf16* __restrict__ b, bf16* __restrict__ y, int B, int H, int W,
                                                int Co, float eps, const bf16* __restrict__ skip,
                                                const int* __restrict__ frame_of_set, int frames) {
    const int lane = threadIdx.x & 31;
    const long long i = blockIdx.x * (long long)(blockDim.x >> 5) + (threadIdx.x >> 5);
    if (i >= (long long)B * 4 * H * W) return;
    const int X = (int)(i % (2 * W));
    const long long r = i / (2 * W);
    const int Y = (int)(r % (2 * H)), n = (int)(r / (2 * H));
    const bf16* src = pp + (((size_t)n * H + Y / 2) * W + X / 2) * Co * 4 + (size_t)((Y % 2) * 2 + X % 2) * Co;
    const bf16* add = nullptr;
    bool bad = false;
    if (skip != nullptr) {
        const int fr = frame_of_set[n];
        bad = fr < 0 || fr >= frames;
        if (!bad) add = skip + (((size_t)fr * 2 * H + Y) * 2 * W + X) * Co;
    }
    float v[UP_MAXV];
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < UP_MAXV; ++k) {
        const int o = lane + 32 * k;
        v[k] = o < Co ? __bfloat162float(src[o]) + (add != nullptr ? __bfloat162float(add[o]) : 0.f) : 0.f;
        sum += v[k];
    }
    const float mean = warp_sum(sum) / Co;
    float sq = 0.f;
#pragma unroll
    for (int k = 0; k < UP_MAXV; ++k) {
        const int o = lane + 32 * k;
        if (o < Co) sq += (v[k] - mean) * (v[k] - mean);
    }
    const float rstd = rsqrtf(warp_sum(sq) / Co + eps);
    bf16* dst = y + i * Co;
#pragma unroll
    for (int k = 0; k < UP_MAXV; ++k) {
        const int o = lane + 32 * k;
        if (o < Co) {
            const float out = bad ? CUDART_NAN_F
                                  : gelu((v[k] - mean) * rstd * __bfloat162float(g[o]) + __bfloat162float(b[o]));
            dst[o] = __float2bfloat16_rn(out);
        }
    }
}

// ---- mask logits: masks fp32 [P, count, 4E, 4E] = hyper[first + m] . upscaled features --------------------
// pp bf16 [P, 2E, 2E, 4*Co], tap-major like above, is the second ConvTranspose's per-pixel output with bias
// (SAM: and GELU) applied (the scatter is folded into the read); hyper fp32 [mt, P, Co]. One thread per output
// pixel computes all `count` masks from one read of its Co features. Co <= MASK_MAXC.
// SKIP (SAM 2): skip bf16 [frames, 4E, 4E, Co] (conv_s0 of frame frame_of_set[p]) is added and GELU applied on
// read (the GEMM ran without its GELU); a frame index outside [0, frames) gives NaN logits. A template flag
// rather than a null check in the loop (the entry point branches once between the two instances): the check in
// the loop costs far more registers than either instance (bench/results/code-comment-figures.md).
constexpr int MASK_MAXC = 64;

template <bool SKIP>
__device__ __forceinline__ void mask_logits(const bf16* __restrict__ pp, const float* __restrict__ hyper,
                                            float* __restrict__ masks, int P, int E, int Co, int mt, int first,
                                            int count, const bf16* __restrict__ skip,
                                            const int* __restrict__ frame_of_set, int frames) {
    const int S = 4 * E, H = 2 * E;
    const long long plane = (long long)S * S;
    const long long total = (long long)P * plane;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int X = (int)(i % S);
        const int Y = (int)((i / S) % S);
        const int p = (int)(i / plane);
        const bf16* src = pp + (((size_t)p * H + Y / 2) * H + X / 2) * Co * 4 + (size_t)((Y % 2) * 2 + X % 2) * Co;
        float f[MASK_MAXC];
        if (Co % 8 == 0) {
#pragma unroll
            for (int c = 0; c < MASK_MAXC; c += 8)
                if (c < Co) ld_row(src + c, f + c, 8);
        } else {
#pragma unroll
            for (int c = 0; c < MASK_MAXC; ++c)
                if (c < Co) f[c] = __bfloat162float(src[c]);
        }
        if constexpr (SKIP) {
            const int fr = frame_of_set[p];
            const bool bad = fr < 0 || fr >= frames;
            const bf16* add = skip + (((size_t)(bad ? 0 : fr) * S + Y) * S + X) * Co;
#pragma unroll
            for (int c = 0; c < MASK_MAXC; ++c)
                if (c < Co) f[c] = bad ? CUDART_NAN_F : gelu(f[c] + __bfloat162float(add[c]));
        }
        for (int m = 0; m < count; ++m) {
            const float* w = hyper + ((size_t)(first + m) * P + p) * Co;
            float a = 0.f;
#pragma unroll
            for (int c = 0; c < MASK_MAXC; ++c)
                if (c < Co) a += w[c] * f[c];
            masks[((size_t)p * count + m) * plane + (i - (long long)p * plane)] = a;
        }
    }
}

}  // namespace decoder_ops
