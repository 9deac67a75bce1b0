// Flash attention for SAM's image encoder: softmax(scale * q.k^T + rel_bias) . v, one head of one
// sequence per CTA column, never materialising the attention matrix (online softmax, FlashAttention-2
// style: each warp owns 16 query rows, K/V tiles of 64 keys stream through shared memory).
//
// Input is the qkv Linear output as the GEMM writes it, [B, H*W, 3*C] bf16 with C = heads * HD and
// each token row laid out q | k | v, each head-major ([heads][HD]). Output is [B, H*W, C], heads
// concatenated, ready for the projection GEMM. The two attention flavours of the encoder differ only
// in which tokens form a sequence:
//   global   (window == 0): all H*W tokens of an image;
//   windowed (window == ws): the ws x ws windows of the grid zero-padded to a multiple of ws (64 -> 70
//            for ws = 14), i.e. window_partition / window_unpartition of image_encoder.py, done here as
//            an index mapping. In the reference the padding is applied to the normalised tokens
//            *before* the qkv Linear, so a padded position's k and v are the qkv bias: that is what
//            the kernel loads for them (qkv_bias may be null: zeros). Padded queries are not stored.
//
// Decomposed relative position bias (add_decomposed_rel_pos, MViTv2): for query (qh, qw) and key
// (kh, kw) in sequence coordinates,
//     bias = <q, Rh[qh - kh + Sh - 1]> + <q, Rw[qw - kw + Sw - 1]>
// with the *unscaled* q, Rh = rel_h [2*Sh-1, HD], Rw = rel_w [2*Sw-1, HD]. Each CTA first tabulates
// <q, Rh[.]> and <q, Rw[.]> for its queries (fp32, shared memory), as two small matrix products on the
// tensor cores, Q . Rh^T and Q . Rw^T, whose elements are scattered to the entries they serve. Key tiles are whole sequence rows
// (R = 64 / Sw rows of Sw keys: 1 row of 64 for global attention, 4 rows of 14 in a window), so a
// thread's key columns have the same kw in every tile: their Rw terms are read once into registers,
// and only the Rh term (one value per row and tile when R = 1) is looked up in the loop. Columns past
// the R*Sw keys of a tile and rows past the sequence get a -inf bias: that is the whole masking.
// Tables longer than 2*S-1 (checkpoints trained at another size) must be resampled on the host first,
// as get_rel_pos does.
//
// Scores live in the log2 domain (scaled by log2(e)) so the softmax uses ex2 directly.
// Constraints (host-checked): HD in {16, 32, 64, 80}; Sh, Sw <= 64; pointers 16-byte aligned.
// Work per window of 14 x 14: 2 CTAs of 112 queries x 4 tiles of 56 keys (of 64 slots).
#pragma once

#include <math_constants.h>

#include "common.cuh"

namespace attention {

constexpr int BKV = 64;              // keys per tile
constexpr int SMEM_PAD = 8;          // bf16 per row: strides of 144 / 176 B keep ldmatrix conflict-free
constexpr float LOG2E = 1.4426950408889634f;

// Sequence rows per key tile.
__host__ __device__ constexpr int rows_per_tile(int seq_w) { return seq_w >= BKV ? 1 : BKV / seq_w; }

// Per query: Sh + R entries of <q, Rh> (the last R are -inf, for tile rows past the sequence), then Sw
// entries of <q, Rw>, then one -inf entry (for key slots past a tile's keys; it also staggers the
// rows across banks).
__host__ __device__ constexpr int rel_stride(int seq_h, int seq_w) {
    return seq_h + rows_per_tile(seq_w) + seq_w + 1;
}

// Dynamic shared memory a CTA needs; the host computes the same number (AttentionKernels.smem).
__host__ __device__ constexpr int smem_bytes(int hd, int nwarps, int seq_h, int seq_w) {
    return (16 * nwarps + 4 * BKV) * (hd + SMEM_PAD) * 2 + 16 * nwarps * rel_stride(seq_h, seq_w) * 4;
}

// Position i of an attention sequence -> token index in its image's H x W grid, or
// PADDED for a window position outside the grid, or BEYOND for i >= L (tile overhang).
constexpr int PADDED = -1, BEYOND = -2;

struct Sequence {
    int L, seq_h, seq_w;   // length and shape of the sequence
    int oy, ox;            // top-left grid position of the window (0, 0 for global)
    int H, W;              // token grid of the image
    float inv_seq_w;

    __device__ __forceinline__ int row_of(int i) const {
        // i / seq_w without a division: exact for i < 2^16 (the fraction stays >= 0.5 / seq_w from
        // an integer, far above float rounding).
        return static_cast<int>((static_cast<float>(i) + 0.5f) * inv_seq_w);
    }
    __device__ __forceinline__ int token(int i) const {
        if (i >= L) return BEYOND;
        const int r = row_of(i), c = i - r * seq_w;
        const int y = oy + r, x = ox + c;
        return (y < H && x < W) ? y * W + x : PADDED;
    }
};

// The sequence of grid index z (images x windows): all H x W tokens of image z (window == 0), or window
// z % windows of image z / windows (windows in row-major order over the grid padded to a multiple of window).
// Sets the image index b.
__device__ __forceinline__ Sequence sequence_of(int z, int H, int W, int window, int& b) {
    Sequence seq;
    seq.H = H;
    seq.W = W;
    if (window > 0) {
        const int nwh = (H + window - 1) / window, nww = (W + window - 1) / window;
        const int w = z % (nwh * nww);
        b = z / (nwh * nww);
        seq.oy = (w / nww) * window;
        seq.ox = (w % nww) * window;
        seq.seq_h = seq.seq_w = window;
    } else {
        b = z;
        seq.oy = seq.ox = 0;
        seq.seq_h = H;
        seq.seq_w = W;
    }
    seq.L = seq.seq_h * seq.seq_w;
    seq.inv_seq_w = 1.0f / seq.seq_w;
    return seq;
}

// ---- pieces shared with the Hopper kernel (attention_sm90.cuh) -----------------------------------------

// The operands of rel_pos_tables: Rh (2 Sh - 1 rows) then Rw (2 Sw - 1 rows), each rounded up to 16 rows (extra rows
// zero), copied (cp.async, not committed) by `threads` threads from `tid` into shared memory at `dst`, rows of LD
// elements. Returns the two row counts.
template <int HD>
__device__ __forceinline__ int2 stage_rel_tables(uint32_t dst, int LD, const bf16* rel_h, const bf16* rel_w,
                                                 const Sequence& seq, int tid, int threads) {
    constexpr int CHUNKS = HD / 8;
    const int rh_rows = ((2 * seq.seq_h - 1) + 15) & ~15, rw_rows = ((2 * seq.seq_w - 1) + 15) & ~15;
    for (int c = tid; c < (rh_rows + rw_rows) * CHUNKS; c += threads) {
        const int r = c / CHUNKS, ch = c % CHUNKS;
        const bool is_h = r < rh_rows;
        const int tr = is_h ? r : r - rh_rows;
        const bool ok = tr < 2 * (is_h ? seq.seq_h : seq.seq_w) - 1;
        const bf16* src = (is_h ? rel_h : rel_w) + (size_t)tr * HD + ch * 8;
        cp_async_16(dst + (r * LD + ch * 8) * 2, ok ? src : rel_h, ok);
    }
    return make_int2(rh_rows, rw_rows);
}

// The relative position tables of one warp's 16 query rows (rows g and g + 8 of this lane), from the warp's Q
// A fragments `qf` and the staged tables Rh (rh_rows rows) and Rw (rw_rows rows after it) at `table`, row
// stride LD elements, extra rows zero. P = Q . Rh^T gives <q, Rh[m]> for every table row m; the query at
// sequence row qh needs relh[j] = P[qh - j + Sh - 1], j < Sh: each accumulator element is scattered to the one
// j it serves (or to none). Same for Rw with qw. `pos` are the sequence positions of the lane's two rows
// (any valid position for rows past the sequence); entries go to rel_row[r][0, Sh) and
// rel_row[r][relw_at, relw_at + Sw), premultiplied by log2(e).
template <int KSTEPS>
__device__ __forceinline__ void rel_pos_tables(const uint32_t (&qf)[KSTEPS][4], const bf16* table, int rh_rows,
                                               int rw_rows, int LD, const Sequence& seq, const int (&pos)[2],
                                               float* const (&rel_row)[2], int relw_at, int lane) {
    const int q4 = lane & 3;
    int qh[2], qw[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        qh[r] = seq.row_of(pos[r]);
        qw[r] = pos[r] - qh[r] * seq.seq_w;
    }
    for (int part = 0; part < 2; ++part) {   // 0: Rh -> entries [0, Sh); 1: Rw -> [relw_at, +Sw)
        const bf16* t = part == 0 ? table : table + rh_rows * LD;
        const int rows = part == 0 ? rh_rows : rw_rows;
        const int side = part == 0 ? seq.seq_h : seq.seq_w;
        const int at = part == 0 ? 0 : relw_at;
        for (int np = 0; np < rows / 16; ++np) {
            float p[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
            for (int ks = 0; ks < KSTEPS; ++ks) {
                uint32_t b[4];
                ldmatrix_x4(b[0], b[1], b[2], b[3],
                            smem_addr(t + (np * 16 + (lane & 7) + ((lane >> 4) << 3)) * LD + ks * 16 +
                                      ((lane >> 3) & 1) * 8));
                mma_bf16_16816(p[0], qf[ks], b);
                mma_bf16_16816(p[1], qf[ks], b + 2);
            }
#pragma unroll
            for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int r = e >> 1;
                    const int m = np * 16 + nt * 8 + q4 * 2 + (e & 1);
                    const int j = (part == 0 ? qh[r] : qw[r]) - m + side - 1;
                    if (j >= 0 && j < side) rel_row[r][at + j] = p[nt][e] * LOG2E;
                }
            }
        }
    }
}

// ONE_ROW tiles (one sequence row of keys each): a lane's key columns c = 8n + 2 q4 + e have the same kw = c in
// every tile, so their <q, Rw> terms are read into registers once, from a row of the tables; slots past the
// tile's keys get -inf (that is the whole key mask).
template <int NT>
__device__ __forceinline__ void load_rw(const float* rel_row, int relw_at, int tile_keys, int q4, float (&rw)[NT][2]) {
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int c = n * 8 + q4 * 2 + e;
            rw[n][e] = c < tile_keys ? rel_row[relw_at + c] : -CUDART_INF_F;
        }
}

// ONE_ROW scores into the log2 domain with the bias: s = s * scale_log2 + <q, Rh[tile row]> + <q, Rw[kw]>, rows g
// (h0, rw0) and g + 8 (h1, rw1).
template <int NT>
__device__ __forceinline__ void add_row_bias(float (&s)[NT][4], float scale_log2, float h0, float h1,
                                             const float (&rw0)[NT][2], const float (&rw1)[NT][2]) {
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            s[n][e] = fmaf(s[n][e], scale_log2, h0 + rw0[n][e]);
            s[n][2 + e] = fmaf(s[n][2 + e], scale_log2, h1 + rw1[n][e]);
        }
}

// s = exp2(s - base[row]) for a lane's two rows, added to their sums l: the last step of both softmax functions below.
template <int NT>
__device__ __forceinline__ void exp2_and_sum(float (&s)[NT][4], const float (&base)[2], float (&l)[2]) {
#pragma unroll
    for (int n = 0; n < NT; ++n) {
        s[n][0] = fast_exp2(s[n][0] - base[0]);
        s[n][1] = fast_exp2(s[n][1] - base[0]);
        s[n][2] = fast_exp2(s[n][2] - base[1]);
        s[n][3] = fast_exp2(s[n][3] - base[1]);
        l[0] += s[n][0] + s[n][1];
        l[1] += s[n][2] + s[n][3];
    }
}

// One key tile of the online softmax for a lane's two rows (FlashAttention-2): `s` holds the scores of the
// tile (log2 domain, bias and mask added) as n8 accumulator tiles, `o` the output accumulators so far, `m`
// the running maxima and `l` this thread's part of the running sums. On return `s` holds the unnormalised
// probabilities exp2(s - m_new) and `o`, `l` are rescaled to the new maxima. The 4 threads of a quad share a
// row.
template <int NT, int DT>
__device__ __forceinline__ void online_softmax(float (&s)[NT][4], float (&o)[DT][4], float (&m)[2], float (&l)[2]) {
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int n = 0; n < NT; ++n) {
        mx[0] = fmaxf(mx[0], fmaxf(s[n][0], s[n][1]));
        mx[1] = fmaxf(mx[1], fmaxf(s[n][2], s[n][3]));
    }
    float base[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
        base[r] = mx[r] == -CUDART_INF_F ? 0.f : mx[r];   // fully masked so far: avoid inf - inf
        const float alpha = fast_exp2(m[r] - base[r]);
        m[r] = mx[r];
        l[r] *= alpha;
#pragma unroll
        for (int d = 0; d < DT; ++d) {
            o[d][2 * r] *= alpha;
            o[d][2 * r + 1] *= alpha;
        }
    }
    exp2_and_sum(s, base, l);
}

// add_row_bias + online_softmax in fewer instructions, for the wgmma kernel's global blocks (attention_sm90.cuh),
// which are issue-bound (few eligible warps per scheduler in Nsight Compute, bench/results/code-comment-figures.md; and every
// instruction of a tile's softmax is paid by three warps per scheduler):
//  - the tile's Rh term (one value per row) is not added to each score: it joins the row maximum and the exponent's
//    offset instead (exp2(s + h - m) = exp2(s - (m - h))), 32 FADDs fewer per tile;
//  - the running maximum m moves only when the tile's exceeds it by more than RESCALE_SLACK (log2 units), so most
//    tiles skip rescaling O and l (34 instructions): the unnormalised probabilities exp2(s - m) are then at most
//    2^RESCALE_SLACK, which bf16 P and the fp32 O and l hold without loss of relative precision, and the result O / l
//    is the same function. Whether to rescale is decided per warp (__any_sync), so the branch never diverges; no wgmma
//    is in flight across it (S has been waited for, P.V not issued yet).
// `s`: the tile's raw scores q.k (as n8 accumulator tiles); h0 / h1 and rw0 / rw1 as in add_row_bias. On return `s`
// holds the probabilities, `o`, `l`, `m` are updated.
// What it saves: bench/results/2026-12-02-h200-sparse-tma.md; the error against fp64 grows slightly (a tile's largest
// probability is no longer exactly 1.0 in bf16; bench/results/code-comment-figures.md). Q as the register operand of S = Q K^T gave
// wrong results together with this function's branch (the asynchronously read A registers and the branch: each alone
// was correct), so Q stays in shared memory.
constexpr float RESCALE_SLACK = 8.f;

// The lazy online softmax of one tile: `s` holds the scores in the log2 domain (mask applied) without the per-row
// offsets h (one value per row, added to the row maximum and the exponent's offset instead). Shared by
// row_softmax_lazy and sdpa_sm90.cuh (h = 0).
template <int NT, int DT>
__device__ __forceinline__ void softmax_lazy(float (&s)[NT][4], const float (&h)[2], float (&o)[DT][4], float (&m)[2],
                                             float (&l)[2]) {
    float mx[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
    for (int n = 0; n < NT; ++n) {
        mx[0] = fmaxf(mx[0], fmaxf(s[n][0], s[n][1]));
        mx[1] = fmaxf(mx[1], fmaxf(s[n][2], s[n][3]));
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
        mx[r] += h[r];   // the tile's row maximum with its offset
    }
    // m = -inf (no key yet): any finite maximum moves it.
    if (__any_sync(0xffffffffu, mx[0] > m[0] + RESCALE_SLACK || mx[1] > m[1] + RESCALE_SLACK)) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float m_new = fmaxf(m[r], mx[r]);
            // exp2(-inf) = 0 when m was -inf (O and l are still 0); a row masked so far keeps its (zero) sums
            const float alpha = m_new == -CUDART_INF_F ? 1.f : fast_exp2(m[r] - m_new);
            m[r] = m_new;
            l[r] *= alpha;
#pragma unroll
            for (int d = 0; d < DT; ++d) {
                o[d][2 * r] *= alpha;
                o[d][2 * r + 1] *= alpha;
            }
        }
    }
    float base[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) base[r] = (m[r] == -CUDART_INF_F ? 0.f : m[r]) - h[r];   // avoid inf - inf
    exp2_and_sum(s, base, l);
}

template <int NT, int DT>
__device__ __forceinline__ void row_softmax_lazy(float (&s)[NT][4], float scale_log2, float h0, float h1,
                                                 const float (&rw0)[NT][2], const float (&rw1)[NT][2], float (&o)[DT][4],
                                                 float (&m)[2], float (&l)[2]) {
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            s[n][e] = fmaf(s[n][e], scale_log2, rw0[n][e]);
            s[n][2 + e] = fmaf(s[n][2 + e], scale_log2, rw1[n][e]);
        }
    const float h[2] = {h0, h1};
    softmax_lazy(s, h, o, m, l);
}

// S = Q K^T for a warp's 16 query rows x TILE keys: Q as the warp's A fragments (qf), K rows of the tile in shared
// memory (row stride LD elements) as the "col" operand, as W in the GEMM. s is zeroed first.
template <int KSTEPS, int TILE>
__device__ __forceinline__ void qk_tile(const uint32_t (&qf)[KSTEPS][4], const bf16* k_s, int LD, int lane,
                                        float (&s)[TILE / 8][4]) {
#pragma unroll
    for (int n = 0; n < TILE / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
    for (int ks = 0; ks < KSTEPS; ++ks) {
#pragma unroll
        for (int np = 0; np < TILE / 16; ++np) {
            uint32_t b[4];
            ldmatrix_x4(b[0], b[1], b[2], b[3],
                        smem_addr(k_s + (np * 16 + (lane & 7) + ((lane >> 4) << 3)) * LD + ks * 16 +
                                  ((lane >> 3) & 1) * 8));
            mma_bf16_16816(s[2 * np], qf[ks], b);
            mma_bf16_16816(s[2 * np + 1], qf[ks], b + 2);
        }
    }
}

// The probabilities of keys 16 kk .. 16 kk + 15 as the A fragment of a k16 MMA step (mma.sync m16n8k16 and
// wgmma m64nNk16 have the same per-warp A layout): the accumulators of n8 tiles 2 kk and 2 kk + 1, in bf16.
template <int NT>
__device__ __forceinline__ void probs_fragment(const float (&s)[NT][4], int kk, uint32_t (&p)[4]) {
    p[0] = pack_bf16x2(s[2 * kk][0], s[2 * kk][1]);
    p[1] = pack_bf16x2(s[2 * kk][2], s[2 * kk][3]);
    p[2] = pack_bf16x2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    p[3] = pack_bf16x2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
}

// O += P V for a warp's 16 rows: P straight from the S accumulators of the tile (probs_fragment), V rows of the tile
// in shared memory (row stride LD) through the transposing ldmatrix, which turns [key][d] into the "col" operand.
template <int HD, int TILE>
__device__ __forceinline__ void pv_tile(const float (&s)[TILE / 8][4], const bf16* v_s, int LD, int lane,
                                        float (&o)[HD / 8][4]) {
#pragma unroll
    for (int kk = 0; kk < TILE / 16; ++kk) {
        uint32_t p[4];
        probs_fragment(s, kk, p);
#pragma unroll
        for (int dp = 0; dp < HD / 16; ++dp) {
            uint32_t b[4];
            ldmatrix_x4_trans(b[0], b[1], b[2], b[3],
                              smem_addr(v_s + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LD + dp * 16 +
                                        (lane >> 4) * 8));
            mma_bf16_16816(o[2 * dp], p, b);
            mma_bf16_16816(o[2 * dp + 1], p, b + 2);
        }
    }
}

// Normalises a lane's two output rows and stores them (bf16 pairs, heads concatenated): row r goes to
// out_img[tok[r] * C + head * HD], or nowhere when tok[r] < 0 (padding, past the sequence).
template <int DT>
__device__ __forceinline__ void store_rows(const float (&o)[DT][4], const float (&l)[2], const int (&tok)[2],
                                           bf16* out_img, int C, int head_offset, int q4) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        float sum = l[r];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        const float inv = 1.f / sum;
        if (tok[r] < 0) continue;
        bf16* dst = out_img + (size_t)tok[r] * C + head_offset + q4 * 2;
#pragma unroll
        for (int d = 0; d < DT; ++d)
            *reinterpret_cast<uint32_t*>(dst + d * 8) = pack_bf16x2(o[d][2 * r] * inv, o[d][2 * r + 1] * inv);
    }
}

// ONE_ROW: every key tile is exactly one sequence row (Sw > 32, i.e. R == 1: global attention on the
// 64 x 64 grid); the Rh term is then one value per row and tile. Otherwise R >= 1 rows per tile.
template <int HD, int NWARPS, bool ONE_ROW>
__device__ __forceinline__ void attention_fwd(const bf16* __restrict__ qkv, const bf16* __restrict__ qkv_bias,
                                              const bf16* __restrict__ rel_h, const bf16* __restrict__ rel_w,
                                              bf16* __restrict__ out, int H, int W, int heads, int window,
                                              float scale) {
    constexpr int BQ = 16 * NWARPS;       // queries per CTA
    constexpr int THREADS = 32 * NWARPS;
    constexpr int LD = HD + SMEM_PAD;     // shared row stride, elements
    constexpr int CHUNKS = HD / 8;        // 16-byte chunks per head row
    constexpr int KSTEPS = HD / 16;       // k16 steps of q.k^T
    constexpr int DT = HD / 8;            // n8 tiles of the output row
    static_assert(HD % 16 == 0, "head dim must be a multiple of 16");

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, q4 = lane & 3;   // mma fragment row group / column pair
    const int head = blockIdx.y;
    const int C = heads * HD, row_stride = 3 * C;

    // ---- which sequence this CTA works on ------------------------------------------------------
    int b;
    const Sequence seq = sequence_of(blockIdx.z, H, W, window, b);
    const int q0 = blockIdx.x * BQ;
    const bf16* img = qkv + (size_t)b * H * W * row_stride;
    bf16* out_img = out + (size_t)b * H * W * C;

    // ---- shared memory -------------------------------------------------------------------------
    extern __shared__ __align__(128) unsigned char smem[];
    bf16* sQ = reinterpret_cast<bf16*>(smem);   // [BQ][LD]
    bf16* sK = sQ + BQ * LD;                    // [2][BKV][LD]
    bf16* sV = sK + 2 * BKV * LD;               // [2][BKV][LD]
    float* sRel = reinterpret_cast<float*>(sV + 2 * BKV * LD);   // [BQ][rel_ld], see rel_stride
    const int R = rows_per_tile(seq.seq_w);                      // sequence rows per key tile
    const int tile_keys = R * seq.seq_w;                         // real key slots per tile (<= BKV)
    const int rel_ld = rel_stride(seq.seq_h, seq.seq_w);
    const int relw_at = seq.seq_h + R;                           // where the <q, Rw> entries start

    // ---- loads ---------------------------------------------------------------------------------
    // K and V rows of key tile t (sequence positions t*tile_keys ...) into buffer buf: real tokens from
    // qkv, padded window positions from the qkv bias, slots past the tile or the sequence as zeros
    // (their scores are -inf, see above).
    auto load_kv = [&](int t, int buf) {
        bf16* k_dst = sK + buf * BKV * LD;
        bf16* v_dst = sV + buf * BKV * LD;
        for (int c = tid; c < BKV * CHUNKS; c += THREADS) {
            const int r = c / CHUNKS, ch = c % CHUNKS;
            const int tok = r < tile_keys ? seq.token(t * tile_keys + r) : BEYOND;
            const bf16* k_src;
            bool ok;
            if (tok >= 0) {
                k_src = img + (size_t)tok * row_stride + C + head * HD + ch * 8;
                ok = true;
            } else {
                ok = tok == PADDED && qkv_bias != nullptr;
                k_src = ok ? qkv_bias + C + head * HD + ch * 8 : img;
            }
            cp_async_16(smem_addr(k_dst + r * LD + ch * 8), k_src, ok);
            cp_async_16(smem_addr(v_dst + r * LD + ch * 8), ok ? k_src + C : img, ok);
        }
    };

    // Q rows of this CTA (padded / overhanging positions: zeros; their outputs are never stored).
    for (int c = tid; c < BQ * CHUNKS; c += THREADS) {
        const int r = c / CHUNKS, ch = c % CHUNKS;
        const int tok = seq.token(q0 + r);
        const bool ok = tok >= 0;
        cp_async_16(smem_addr(sQ + r * LD + ch * 8),
                    ok ? img + (size_t)tok * row_stride + head * HD + ch * 8 : img, ok);
    }
    // Rh and Rw, borrowing the K/V buffers until the tables are made (at most 128 + 128 rows = the 4 x 64 rows
    // of the K/V region).
    bf16* sRh = sK;   // then Rw from row rh_rows
    const int2 table_rows = stage_rel_tables<HD>(smem_addr(sRh), LD, rel_h, rel_w, seq, tid, THREADS);
    const int rh_rows = table_rows.x, rw_rows = table_rows.y;
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();

    // This warp's 16 query rows as mma A fragments, kept in registers for the whole key loop.
    uint32_t qf[KSTEPS][4];
#pragma unroll
    for (int ks = 0; ks < KSTEPS; ++ks)
        ldmatrix_x4(qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3],
                    smem_addr(sQ + (warp * 16 + (lane & 15)) * LD + ks * 16 + (lane >> 4) * 8));

    // ---- relative position tables on the tensor cores (rel_pos_tables) ---------------------------------
    {
        int pos[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) pos[r] = min(q0 + warp * 16 + g + 8 * r, seq.L - 1);   // overhang: any valid
        float* const rel_row[2] = {sRel + (warp * 16 + g) * rel_ld, sRel + (warp * 16 + g + 8) * rel_ld};
        rel_pos_tables<KSTEPS>(qf, sRh, rh_rows, rw_rows, LD, seq, pos, rel_row, relw_at, lane);
        // The -inf entries: Rh of tile rows past the sequence, and the last one of each row.
        for (int idx = tid; idx < BQ * (R + 1); idx += THREADS) {
            const int r = idx / (R + 1), k = idx % (R + 1);
            sRel[r * rel_ld + (k < R ? seq.seq_h + k : rel_ld - 1)] = -CUDART_INF_F;
        }
    }
    __syncthreads();   // tables complete; every warp is done with Rh / Rw in the K/V buffers
    load_kv(0, 0);
    cp_async_commit();

    // ---- main loop over key tiles -----------------------------------------------------------------
    float o[DT][4];
#pragma unroll
    for (int d = 0; d < DT; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.f;
    float m[2] = {-CUDART_INF_F, -CUDART_INF_F};   // running max of rows g and g+8 (log2 domain)
    float l[2] = {0.f, 0.f};                       // this thread's part of the running row sums
    const float scale_log2 = scale * LOG2E;
    const float* rel0 = sRel + (warp * 16 + g) * rel_ld;   // tables of rows g and g + 8
    const float* rel1 = rel0 + 8 * rel_ld;
    const int n_tiles = (seq.seq_h + R - 1) / R;

    // ONE_ROW: the Rw terms of this thread's key columns, in registers for the whole loop (load_rw).
    float rw0[ONE_ROW ? BKV / 8 : 1][2], rw1[ONE_ROW ? BKV / 8 : 1][2];
    if constexpr (ONE_ROW) {
        load_rw(rel0, relw_at, tile_keys, q4, rw0);
        load_rw(rel1, relw_at, tile_keys, q4, rw1);
    }
    // Otherwise c -> (row dh in the tile, kw) each tile: c / seq_w as (c * div_magic) >> 16, exact for
    // c < 64 and seq_w <= 64.
    const int div_magic = 65536 / seq.seq_w + 1;

    for (int t = 0; t < n_tiles; ++t) {
        const int buf = t & 1;
        cp_async_wait<0>();
        __syncthreads();   // tile t (and the tables) visible; every warp is done with tile t-1
        if (t + 1 < n_tiles) load_kv(t + 1, buf ^ 1);
        cp_async_commit();

        const bf16* k_s = sK + buf * BKV * LD;
        const bf16* v_s = sV + buf * BKV * LD;

        // S = Q K^T for 16 rows x 64 keys.
        float s[BKV / 8][4];
        qk_tile<KSTEPS, BKV>(qf, k_s, LD, lane, s);

        // Scale and add the relative position bias (masking included).
        if constexpr (ONE_ROW) {   // one Rh term per row for the whole tile
            add_row_bias(s, scale_log2, rel0[t], rel1[t], rw0, rw1);
        } else {
            // An opaque copy of q4: keeps the compiler from hoisting 64 loop-invariant table addresses
            // into registers (which costs the second CTA per SM); recomputing them is a few integer ops.
            int lane_q4 = q4;
            asm volatile("" : "+r"(lane_q4));
            const int tile_row = t * R;
#pragma unroll
            for (int n = 0; n < BKV / 8; ++n) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int c = n * 8 + lane_q4 * 2 + e;
                    const int dh = (c * div_magic) >> 16, kw = c - dh * seq.seq_w;
                    // Key slots past the tile's keys take the -inf entry at the end of the row.
                    const int h = c < tile_keys ? tile_row + dh : 0;
                    const int w = c < tile_keys ? relw_at + kw : rel_ld - 1;
                    s[n][e] = fmaf(s[n][e], scale_log2, rel0[h] + rel0[w]);
                    s[n][2 + e] = fmaf(s[n][2 + e], scale_log2, rel1[h] + rel1[w]);
                }
            }
        }
        online_softmax(s, o, m, l);

        // O += P V. The S accumulators of n8 tiles 2k and 2k+1 are exactly the A fragment of k16
        // step k, so P goes from registers to the tensor cores without touching shared memory.
        pv_tile<HD, BKV>(s, v_s, LD, lane, o);
    }

    // ---- normalise and store (window_unpartition: padded positions are dropped) -------------------
    const int tok[2] = {seq.token(q0 + warp * 16 + g), seq.token(q0 + warp * 16 + g + 8)};
    store_rows(o, l, tok, out_img, C, head * HD, q4);
}

}  // namespace attention
