// Plain scaled dot-product attention for SAM 2's Hiera (and, later, its memory attention):
// o = softmax(scale * q.k^T) . v per head, flash-style (online softmax, FlashAttention-2: each warp owns
// 16 query rows, K/V tiles of 64 keys stream through shared memory, double-buffered with cp.async).
//
// Unlike attention.cuh (SAM's ViT: self-attention with a relative position bias over one qkv buffer),
// queries, keys and values are three strided row sets of any lengths nq and nk, so a pooled query set (a
// Hiera block that halves its map) attends over its window's full key set. Rows of batch z start at
// base + z * batch_stride; row i at + i * ld; head h's columns at + h * hd. The head dim hd may be any
// multiple of 8 up to the template's HD: columns past hd load as zeros (they add nothing to q.k) and are
// not stored. Keys past nk get a -inf score: the whole mask.
//
// Split keys (flash-decoding): with `splits` > 1 grid x is (query tile, split) and each CTA takes one contiguous
// share of the key tiles, leaving its rows' unnormalised output (fp32) and running max / sum in part_o / part_ml;
// combine() merges the shares. For few long sequences (SAM 2's memory attention on one object: 64 CTAs over 28 k keys)
// this is what fills the GPU.
// Grid: (ceil(nq / BQ) * splits, heads, batches); NWARPS * 32 threads. Shared memory: smem_bytes(HD, NWARPS, BKV). Key tiles
// are 64 keys, 32 at head dim 256 (fewer score registers next to the 128 of the output rows).
// Constraints (host-checked, Sam2Kernels.sdpa): hd % 8 == 0, hd <= HD, ld % 8 == 0, 16-byte aligned bases.
#pragma once

#include "attention.cuh"

namespace sdpa {

using attention::SMEM_PAD;

__host__ __device__ constexpr int smem_bytes(int hd, int nwarps, int bkv) {
    return (16 * nwarps + 4 * bkv) * (hd + SMEM_PAD) * 2;
}

// One strided row set: rows of batch z at base + z * batch, row i at + i * ld.
struct Rows {
    const bf16* base;
    int ld;
    long long batch;
};

// Where a CTA's key split leaves its share (splits > 1): rows of (split, batch z, head) in part_o / part_ml.
struct Split {
    int splits, split, z, batches, heads, head;
    float* part_o;
    float2* part_ml;
};

// The epilogue of both attention kernels (this one and sdpa_sm90.cuh): a lane's two rows row0 and row0 + 8 of its
// accumulators (n8 tiles: [d][0..1] row row0, [d][2..3] row row0 + 8, columns 8 d + 2 q4 + 0..1; rows past nq and
// columns past hd dropped), normalised into the bf16 rows of `ob`, or for a key split left unnormalised in part_o with
// the running max / sum in part_ml (combine merges them). `l` is this thread's part of the sums (the quad adds them).
template <int DT>
__device__ __forceinline__ void store_rows(const float (&acc)[DT][4], const float (&m)[2], const float (&l)[2], int row0,
                                           int q4, bf16* __restrict__ ob, int o_ld, int nq, int hd, const Split& sp) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        float sum = l[r];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        const int row = row0 + 8 * r;
        if (row >= nq) continue;
        if (sp.splits > 1) {
            const size_t at = ((size_t)(sp.split * sp.batches + sp.z) * sp.heads + sp.head) * nq + row;
            if (q4 == 0) sp.part_ml[at] = make_float2(m[r], sum);
            float* dst = sp.part_o + at * hd + q4 * 2;
#pragma unroll
            for (int d = 0; d < DT; ++d)
                if (d * 8 + q4 * 2 < hd) *reinterpret_cast<float2*>(dst + d * 8) = make_float2(acc[d][2 * r], acc[d][2 * r + 1]);
            continue;
        }
        const float inv = 1.f / sum;
        bf16* dst = ob + (size_t)row * o_ld + q4 * 2;
#pragma unroll
        for (int d = 0; d < DT; ++d)
            if (d * 8 + q4 * 2 < hd)
                *reinterpret_cast<uint32_t*>(dst + d * 8) = pack_bf16x2(acc[d][2 * r] * inv, acc[d][2 * r + 1] * inv);
    }
}

template <int HD, int NWARPS, int BKV>
__device__ __forceinline__ void sdpa_fwd(Rows q, Rows k, Rows v, bf16* __restrict__ o, int o_ld, long long o_batch,
                                         int nq, int nk, int hd, float scale, int splits, float* __restrict__ part_o,
                                         float2* __restrict__ part_ml) {
    constexpr int BQ = 16 * NWARPS;
    constexpr int THREADS = 32 * NWARPS;
    constexpr int LD = HD + SMEM_PAD;
    constexpr int CHUNKS = HD / 8;
    constexpr int KSTEPS = HD / 16;
    constexpr int DT = HD / 8;
    static_assert(HD % 16 == 0 && BKV % 16 == 0, "head dim and key tile must be multiples of 16");

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, q4 = lane & 3;
    const int col = blockIdx.y * hd;
    const long long z = blockIdx.z;
    const int split = blockIdx.x % splits;
    const int q0 = (blockIdx.x / splits) * BQ;
    const int all_tiles = (nk + BKV - 1) / BKV, per_split = (all_tiles + splits - 1) / splits;
    const int t0 = min(all_tiles, split * per_split), t1 = min(all_tiles, t0 + per_split);
    const int real_chunks = hd / 8;
    const bf16* qb = q.base + z * q.batch + col;
    const bf16* kb = k.base + z * k.batch + col;
    const bf16* vb = v.base + z * v.batch + col;
    bf16* ob = o + z * o_batch + col;

    extern __shared__ __align__(128) unsigned char smem[];
    bf16* sQ = reinterpret_cast<bf16*>(smem);   // [BQ][LD]
    bf16* sK = sQ + BQ * LD;                    // [2][BKV][LD]
    bf16* sV = sK + 2 * BKV * LD;               // [2][BKV][LD]

    // K and V rows of key tile t into buffer buf; rows past nk and columns past hd as zeros.
    auto load_kv = [&](int t, int buf) {
        bf16* k_dst = sK + buf * BKV * LD;
        bf16* v_dst = sV + buf * BKV * LD;
        for (int c = tid; c < BKV * CHUNKS; c += THREADS) {
            const int r = c / CHUNKS, ch = c % CHUNKS;
            const int key = t * BKV + r;
            const bool ok = key < nk && ch < real_chunks;
            cp_async_16(smem_addr(k_dst + r * LD + ch * 8), ok ? kb + (size_t)key * k.ld + ch * 8 : k.base, ok);
            cp_async_16(smem_addr(v_dst + r * LD + ch * 8), ok ? vb + (size_t)key * v.ld + ch * 8 : v.base, ok);
        }
    };

    for (int c = tid; c < BQ * CHUNKS; c += THREADS) {
        const int r = c / CHUNKS, ch = c % CHUNKS;
        const bool ok = q0 + r < nq && ch < real_chunks;
        cp_async_16(smem_addr(sQ + r * LD + ch * 8), ok ? qb + (size_t)(q0 + r) * q.ld + ch * 8 : q.base, ok);
    }
    if (t0 < t1) load_kv(t0, 0);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();

    // This warp's 16 query rows as mma A fragments, in registers for the whole key loop.
    uint32_t qf[KSTEPS][4];
#pragma unroll
    for (int ks = 0; ks < KSTEPS; ++ks)
        ldmatrix_x4(qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3],
                    smem_addr(sQ + (warp * 16 + (lane & 15)) * LD + ks * 16 + (lane >> 4) * 8));

    float acc[DT][4];
#pragma unroll
    for (int d = 0; d < DT; ++d) acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.f;
    float m[2] = {-CUDART_INF_F, -CUDART_INF_F};
    float l[2] = {0.f, 0.f};
    const float scale_log2 = scale * attention::LOG2E;
    for (int t = t0; t < t1; ++t) {
        const int buf = (t - t0) & 1;
        if (t > t0) {
            cp_async_wait<0>();
            __syncthreads();   // tile t visible; every warp is done with tile t - 1
        }
        if (t + 1 < t1) load_kv(t + 1, buf ^ 1);
        cp_async_commit();

        const bf16* k_s = sK + buf * BKV * LD;
        const bf16* v_s = sV + buf * BKV * LD;

        // S = Q K^T for 16 rows x BKV keys.
        float s[BKV / 8][4];
        attention::qk_tile<KSTEPS, BKV>(qf, k_s, LD, lane, s);
        // Into the log2 domain; keys past nk masked.
        const int keys = nk - t * BKV;
#pragma unroll
        for (int n = 0; n < BKV / 8; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const bool live = n * 8 + q4 * 2 + e < keys;
                s[n][e] = live ? s[n][e] * scale_log2 : -CUDART_INF_F;
                s[n][2 + e] = live ? s[n][2 + e] * scale_log2 : -CUDART_INF_F;
            }
        attention::online_softmax(s, acc, m, l);

        // O += P V (P straight from the S accumulators; V through the transposing ldmatrix).
        attention::pv_tile<HD, BKV>(s, v_s, LD, lane, acc);
    }

    store_rows(acc, m, l, q0 + warp * 16 + g, q4, ob, o_ld, nq, hd, Split{splits, split, (int)z, (int)gridDim.z,
                                                                      (int)gridDim.y, (int)blockIdx.y, part_o, part_ml});
}

// Merges the key splits' shares: o = sum_s 2^(m_s - M) O_s / sum_s 2^(m_s - M) l_s, M = max_s m_s (log2 domain), into
// the bf16 output rows. One thread per output value; part layouts as sdpa_fwd writes them.
__device__ __forceinline__ void combine(const float* __restrict__ part_o, const float2* __restrict__ part_ml,
                                        bf16* __restrict__ o, int o_ld, long long o_batch, int batches, int heads,
                                        int nq, int hd, int splits) {
    const long long total = (long long)batches * heads * nq * hd;
    const long long per_split = (long long)batches * heads * nq;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int col = (int)(i % hd);
        const long long rowid = i / hd;   // (z * heads + h) * nq + row
        const int row = (int)(rowid % nq);
        const int h = (int)((rowid / nq) % heads);
        const long long z = rowid / ((long long)nq * heads);
        float mx = -CUDART_INF_F;
        for (int s = 0; s < splits; ++s) mx = fmaxf(mx, part_ml[s * per_split + rowid].x);
        float num = 0.f, den = 0.f;
        for (int s = 0; s < splits; ++s) {
            const float2 ml = part_ml[s * per_split + rowid];
            if (ml.y == 0.f) continue;   // a share with no keys
            const float w = fast_exp2(ml.x - mx);
            den += w * ml.y;
            num += w * part_o[(s * per_split + rowid) * hd + col];
        }
        o[z * o_batch + (size_t)row * o_ld + h * hd + col] = __float2bfloat16_rn(num / den);
    }
}

}  // namespace sdpa
