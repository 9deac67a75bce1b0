// Hopper (sm_90a) flash attention for SAM's image encoder at head dim 64 (vit_b, vit_l), both products on warpgroup
// MMA (wgmma): the function of attention.cuh (softmax(scale q.k^T + decomposed rel-pos bias) . v) for
//   global blocks (attention_fwd_sm90): all H x W tokens of an image, sequences wider than 32 tokens (key tiles of
//     one sequence row, as attention.cuh's ONE_ROW kernel);
//   windowed blocks (attention_window_halves_sm90, below): windows of 9 to 16 tokens a side (SAM's 14 x 14), padding
//     included (padded positions' k and v are the qkv bias, as in the reference).
//
// Why. The mma.sync kernel stays far below the tensor cores' rate on global and windowed blocks
// (bench/results/2026-11-30-h200-wgmma.md): each warp re-reads every K and V tile from shared memory through
// ldmatrix for its 16 rows, and one barrier per tile holds all warps together. Here the tensor cores read K and V
// from shared memory once per 64 query rows, P stays in registers as wgmma's A operand, and the warpgroups never
// wait for each other: a producer warpgroup streams K/V tiles through a ring of STAGES slots with full / empty
// mbarriers, so one consumer's softmax overlaps another's matrix products.
//
// Global blocks, one CTA per SM: warpgroup 0 the producer, then 3 consumer warpgroups of 64 queries each (BQ = 192),
// 512 threads; grid x = ceil(L / 192), y = heads, z = images. Key tiles are whole sequence rows so that a lane's key
// columns keep their Rw terms from tile to tile (registers): one row of <= 64 keys per tile, slots past the row
// masked. (Windowed blocks: 4 window rows per key tile, row dh in slots 16 dh .. 16 dh + 15, 14 keys + 2 masked:
// each n8 tile of scores lies in one window row, so its Rh term is one value per query row.)
// Consumers with no query of the sequence (the last global block) leave after the prologue; the empty barriers
// count only the active ones.
//
// Prologue (all threads): Q and the tables Rh, Rw into shared memory; each consumer warp makes the relative
// position tables of its rows on the tensor cores (attention::rel_pos_tables, the mma.sync kernel's code). Then:
//   producer: for tile t (slot s = t % STAGES): wait empty[s] (once the ring has wrapped), cp.async the tile's K
//     and V rows (slots past the rows: zeros; padded window positions: the qkv bias), commit; then, LAG = STAGES - 2
//     tiles behind, cp.async.wait_group + fence.proxy.async (the copies go through the generic proxy, wgmma reads
//     through the async proxy) + arrive on full[(t - LAG) % STAGES]. The protocol of gemm_sm90.cuh (v1).
//   consumer: wait full[s]; S = Q K^T (4 wgmma m64n64k16 per m64 block, both operands in shared memory); bias and
//     mask, online softmax (online_softmax), P to bf16 A fragments (probs_fragment); O += P V (4 wgmma m64n64k16
//     per block, A from registers, V as an N-major B operand); after both products, lane 0 of each warp arrives on
//     empty[s]. tools/hopper_pipeline_model.py checks this protocol.
//
// Shared-memory layouts (1024-byte aligned, rows of 64 bf16 = 128 B with the 128-byte swizzle: 16-byte chunk c of
// row r at chunk c ^ (r % 8)). Q [BQ rows][64 d] and K [64 key slots][64 d] are K-major operands, exactly as in
// gemm_sm90.cuh. V [64 key slots][64 d] in the same layout is the B operand of P.V in N-major form: a 128B
// "MN-major" swizzle atom is 8 keys x 64 d (1024 B), the next 8 keys 1024 B further (the descriptor's stride byte
// offset), so the descriptor is the same as for K and a k16 step advances 16 keys = 2048 B
// (tools/wgmma_layout_check.py derives both from the PTX ISA's canonical layouts).
//
// Windowed blocks run half a window per CTA (WindowHalves, attention_window_halves_sm90; a whole window per CTA,
// latency-bound with one CTA per SM, was slower in the vit_b encoder, bench/results/2026-12-02-h200-sparse-tma.md,
// and was removed). So here a CTA
// takes 128 query slots of a window (grid x = ceil(L / 128): 1 for windows of 9 to 11, 2 for 12 to 16; blockIdx.x
// picks the half), 2 consumer warpgroups of one m64 block each (256 threads, <= 128 registers, __launch_bounds__(256,
// 2)), no producer and no mbarriers: all threads cp.async Q, the staged Rh / Rw (commit group 0) and the whole window's
// K and V (4 key tiles of 64 slots, the layouts and slot rule above, padded positions from the qkv bias; group 1) in the
// prologue. The tables are made while K / V land; then cp.async.wait_group 0 + fence.proxy.async (the copies wrote
// through the generic proxy, wgmma reads through the async proxy) + __syncthreads, and each consumer runs the key loop
// of the global kernel's structure with the windowed bias (add_window_bias, online_softmax). Shared
// memory Q 16 KB | K/V 64 KB | staged Rh, Rw 9 KB | tables 18.5 KB | 1 KB slack = 108.5 KB, so two CTAs share an SM and
// one's prologue and latencies overlap the other's MMAs (ptxas: 121 registers, no spills; measurements in
// bench/results/2026-12-02-h200-sparse-tma.md).
//
// Numerics are those of the mma.sync kernel (fp32 scores and sums in the log2 domain, P rounded to bf16 for P.V,
// the output rounded to bf16); the tests compare both with the same double-precision reference.
// The kernel body exists only for sm_90a (SAMSTREAM_SM90A); elsewhere it traps, and AttentionKernels launches it only
// on compute capability 9.0.
#pragma once

#include "attention.cuh"
#include "gemm_sm90.cuh"

namespace attention_sm90 {

constexpr int HD = 64;
constexpr int ROW_BYTES = HD * 2;                      // 128: one swizzle-atom row
constexpr int KV_BYTES = attention::BKV * ROW_BYTES;   // one K or V tile: 8 KB
constexpr int STAGING_LD = HD + attention::SMEM_PAD;   // Rh / Rw rows while the tables are made (ldmatrix layout)

// The global blocks' configuration.
struct Config {
    static constexpr int CONSUMERS = 3;                  // consumer warpgroups
    static constexpr int MI = 1;                         // m64 query blocks per consumer
    static constexpr int BQ = 64 * MI * CONSUMERS;       // queries per CTA
    static constexpr int THREADS = 128 * (CONSUMERS + 1);
    static constexpr int STAGES = 5;
    static constexpr int LAG = STAGES - 2;
    static constexpr int ROWS_PER_TILE = 1;              // sequence rows per key tile
    static constexpr int ROW_SLOTS = 64;                 // key slots per sequence row
    static constexpr int MAX_SIDE = 64;                  // longest sequence side
    // Per query: Sh entries of <q, Rh> + ROWS_PER_TILE (-inf: tile rows past the sequence) + Sw of <q, Rw> + 1.
    static constexpr int REL_LD = MAX_SIDE + ROWS_PER_TILE + MAX_SIDE + 1;
    static constexpr int Q_BYTES = BQ * ROW_BYTES;
    static constexpr int RING_BYTES = STAGES * 2 * KV_BYTES;
    static constexpr int REL_BYTES = BQ * REL_LD * 4;
    // Q | STAGES x (K, V) | tables | full[STAGES], empty[STAGES] | slack to align the base to 1024 B.
    static constexpr int SMEM_BYTES = Q_BYTES + RING_BYTES + REL_BYTES + 2 * STAGES * 8 + 1024;
    // setmaxnreg: at launch 65536 / THREADS per thread (one CTA per SM); the producer gives back to 40 and the
    // consumers take the rest (40 x 128 + 152 x 384 <= 65536).
    static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 152;
    static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 CTA can have");
    static_assert(2 * (2 * MAX_SIDE) * STAGING_LD * 2 <= RING_BYTES, "the staged Rh, Rw must fit in the ring");
    static_assert(ROWS_PER_TILE * ROW_SLOTS == attention::BKV, "a key tile is 64 slots");
    static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 128 * CONSUMERS <= 65536, "register split");
};
// The windowed configuration with half a window per CTA (see the header): 2 consumer warpgroups of 64 queries, no
// producer; the whole window's K and V, loaded in the prologue. Two CTAs per SM.
struct WindowHalves {
    static constexpr int CONSUMERS = 2;                  // warpgroups, one m64 block of queries each (MI = 1)
    static constexpr int BQ = 64 * CONSUMERS;            // query slots per CTA: half of a window's 256
    static constexpr int THREADS = 128 * CONSUMERS;
    static constexpr int CTAS_PER_SM = 2;
    static constexpr int ROWS_PER_TILE = 4, ROW_SLOTS = 16, MAX_SIDE = 16;   // 4 window rows of 16 slots per key tile
    static constexpr int TILES = (MAX_SIDE + ROWS_PER_TILE - 1) / ROWS_PER_TILE;   // key tiles of the largest window
    static constexpr int REL_LD = MAX_SIDE + ROWS_PER_TILE + MAX_SIDE + 1;
    static constexpr int Q_BYTES = BQ * ROW_BYTES;
    static constexpr int KV_ALL_BYTES = TILES * 2 * KV_BYTES;                      // tile t: K, then V
    static constexpr int STAGING_BYTES = 2 * (2 * MAX_SIDE) * STAGING_LD * 2;      // Rh, Rw: 32 rows each at most
    static constexpr int REL_BYTES = BQ * REL_LD * 4;
    // Q | K/V of every tile | staged Rh, Rw | tables | slack to align the base to 1024 B.
    static constexpr int SMEM_BYTES = Q_BYTES + KV_ALL_BYTES + STAGING_BYTES + REL_BYTES + 1024;
    static_assert(CTAS_PER_SM * (SMEM_BYTES + 1024) <= 233472, "two CTAs (+ 1 KB each for the system) per 228 KB SM");
    static_assert(CTAS_PER_SM * THREADS * 128 <= 65536, "128 registers per thread for two CTAs per SM");
    static_assert(ROWS_PER_TILE * ROW_SLOTS == attention::BKV, "a key tile is 64 slots");
    static_assert(TILES * ROWS_PER_TILE * ROW_SLOTS == 256, "a window's K / V fill 4 tiles");
};

#ifdef SAMSTREAM_SM90A

#define SAMSTREAM_ACC32(d)                                                                                     \
    "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]),  \
        "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), \
        "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), \
        "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), \
        "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
#define SAMSTREAM_REGS32                                                                                   \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27," \
    "%28,%29,%30,%31}"

// D[64 x 64] (+)= A[64 x 16] . B[64 x 16]^T, both K-major in shared memory; D is overwritten when !accumulate.
// The accumulators as 8 n8 tiles of 4 (the layout of attention.cuh's fragments: [n][0..1] row g, [n][2..3] row
// g + 8, columns 8n + 2 q4 + 0..1).
__device__ __forceinline__ void wgmma_ss_m64n64k16(float (&d)[8][4], uint64_t desc_a, uint64_t desc_b,
                                                   bool accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " SAMSTREAM_REGS32
                 ", %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : SAMSTREAM_ACC32(d)
                 : "l"(desc_a), "l"(desc_b), "r"((int)accumulate));
}

// D[64 x 64] += A[64 x 16] . B[16 x 64]: A from registers (the per-warp mma A fragment layout), B N-major in
// shared memory (imm-trans-b = 1).
__device__ __forceinline__ void wgmma_rs_m64n64k16_tb(float (&d)[8][4], const uint32_t (&a)[4], uint64_t desc_b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " SAMSTREAM_REGS32
                 ", {%32,%33,%34,%35}, %36, p, 1, 1, 1;\n}\n"
                 : SAMSTREAM_ACC32(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

#undef SAMSTREAM_ACC32
#undef SAMSTREAM_REGS32

// Keeps the compiler from moving accesses of accumulator tiles across the asynchronous MMAs: every write before
// this point is done here (so, placed before wgmma.fence, none lands between the fence and the MMAs).
__device__ __forceinline__ void fence_tiles(float (&d)[8][4]) {
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[n][e])::"memory");
}

// The same for the A fragments of P.
__device__ __forceinline__ void fence_fragments(uint32_t (&p)[4][4]) {
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
        for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(p[k][i])::"memory");
}

// Byte offset of 16-byte chunk `chunk` of row `row` in a 128B-swizzled tile.
__device__ __forceinline__ uint32_t swizzled(int row, int chunk) {
    return (uint32_t)(row * ROW_BYTES + ((chunk ^ (row & 7)) << 4));
}

// Where 16-byte chunk `chunk` of the K row of key position (row, col) of the sequence comes from (V is C further; a
// token's q, k, v are 3 C apart): the token's K; a padded window position's, the qkv bias (the reference pads before the Linear); none past
// the sequence (ok = false: zero fill, with `img` as a harmless address). The producer's and the half-window prologue's
// rule.
__device__ __forceinline__ const bf16* key_source(const attention::Sequence& seq, const bf16* img,
                                                  const bf16* qkv_bias, int row, int col, int C, int head, int chunk,
                                                  bool& ok) {
    const int tok = row < seq.seq_h && col < seq.seq_w ? seq.token(row * seq.seq_w + col) : attention::BEYOND;
    if (tok >= 0) {
        ok = true;
        return img + (size_t)tok * 3 * C + C + head * HD + chunk * 8;
    }
    ok = tok == attention::PADDED && qkv_bias != nullptr;
    return ok ? qkv_bias + C + head * HD + chunk * 8 : img;
}

#endif  // SAMSTREAM_SM90A

// Windowed scores into the log2 domain with the bias: s = s * scale_log2 + <q, Rh[tile row dh]> + <q, Rw[kw]> for one
// m64 block's lane rows g (h0, rw0) and g + 8 (h1, rw1): n8 tile n of the 64 key slots is window row dh = n / 2 of the
// tile (h[dh]: that row's Rh term, -inf past the window), its columns kw = 8 (n % 2) + 2 q4 + e (rw[n % 2][e]: -inf
// for kw past the window, the mask).
__device__ __forceinline__ void add_window_bias(float (&s)[8][4], float scale_log2, const float (&h0)[4],
                                                const float (&h1)[4], const float (&rw0)[2][2],
                                                const float (&rw1)[2][2]) {
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            s[n][e] = fmaf(s[n][e], scale_log2, h0[n >> 1] + rw0[n & 1][e]);
            s[n][2 + e] = fmaf(s[n][2 + e], scale_log2, h1[n >> 1] + rw1[n & 1][e]);
        }
}

__device__ __forceinline__ void attention_fwd_sm90(const bf16* __restrict__ qkv, const bf16* __restrict__ rel_h,
                                                   const bf16* __restrict__ rel_w, bf16* __restrict__ out, int H,
                                                   int W, int heads, float scale) {
#ifdef SAMSTREAM_SM90A
    using namespace gemm_sm90;
    using attention::Sequence;
    using Cfg = Config;
    constexpr int KSTEPS = HD / 16, CHUNKS = HD / 8, MI = Cfg::MI, STAGES = Cfg::STAGES, LAG = Cfg::LAG;
    constexpr int R = Cfg::ROWS_PER_TILE;

    const int tid = threadIdx.x, wg = tid / 128, lane = tid & 31;
    const int head = blockIdx.y;
    const int C = heads * HD, row_stride = 3 * C;
    int b;
    const Sequence seq = attention::sequence_of(blockIdx.z, H, W, 0, b);
    const int q0 = blockIdx.x * Cfg::BQ;
    const bf16* img = qkv + (size_t)b * H * W * row_stride;
    bf16* out_img = out + (size_t)b * H * W * C;
    const int n_tiles = (seq.seq_h + R - 1) / R;
    // Consumer warpgroups with at least one query of the sequence (the last global block may have fewer).
    const int active = min(Cfg::CONSUMERS, (seq.L - q0 + 64 * MI - 1) / (64 * MI));

    extern __shared__ unsigned char smem_raw[];
    const uint32_t base = (smem_addr(smem_raw) + 1023) & ~1023u;   // swizzled tiles need 1024-byte alignment
    unsigned char* const base_ptr = smem_raw + (base - smem_addr(smem_raw));
    const uint32_t sQ = base;
    const uint32_t ring = base + Cfg::Q_BYTES;                      // slot s: K at ring + 2 s KV, V after it
    float* const sRel = reinterpret_cast<float*>(base_ptr + Cfg::Q_BYTES + Cfg::RING_BYTES);
    const uint32_t bars = base + Cfg::Q_BYTES + Cfg::RING_BYTES + Cfg::REL_BYTES;
    auto k_slot = [&](int s) { return ring + s * 2 * KV_BYTES; };
    auto full = [&](int s) { return bars + 8 * s; };
    auto empty = [&](int s) { return bars + 8 * (STAGES + s); };
    const int rel_ld = seq.seq_h + R + seq.seq_w + 1;
    const int relw_at = seq.seq_h + R;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), 128);          // every producer thread, once per tile
            mbar_init(empty(s), 4 * active);  // lane 0 of every active consumer warp, once per tile
        }
    }

    // ---- prologue: Q and the staged tables (the ring is free until the producer starts) ----------------
    for (int c = tid; c < Cfg::BQ * CHUNKS; c += Cfg::THREADS) {
        const int r = c / CHUNKS, ch = c % CHUNKS;
        const int tok = seq.token(q0 + r);   // padding and rows past the sequence: zeros (never stored)
        cp_async_16(sQ + swizzled(r, ch), tok >= 0 ? img + (size_t)tok * row_stride + head * HD + ch * 8 : img,
                    tok >= 0);
    }
    const bf16* staged = reinterpret_cast<const bf16*>(base_ptr + Cfg::Q_BYTES);   // Rh rows, then Rw rows, in the ring
    const int2 table_rows = attention::stage_rel_tables<HD>(ring, STAGING_LD, rel_h, rel_w, seq, tid, Cfg::THREADS);
    const int rh_rows = table_rows.x, rw_rows = table_rows.y;
    cp_async_commit();
    // The -inf entries of every row: Rh of tile rows past the sequence, and the last one.
    for (int idx = tid; idx < Cfg::BQ * (R + 1); idx += Cfg::THREADS) {
        const int r = idx / (R + 1), k = idx % (R + 1);
        sRel[r * rel_ld + (k < R ? seq.seq_h + k : rel_ld - 1)] = -CUDART_INF_F;
    }
    cp_async_wait<0>();
    __syncthreads();   // Q, the staged tables and the barriers' initialisation visible to all

    // This lane's rows (consumers): block mi's rows 64 (c MI + mi) + 16 w + g and + 8, CTA-local.
    const int cw = wg - 1, w4 = (tid >> 5) & 3, g = lane >> 2, q4 = lane & 3;
    auto row_of = [&](int mi) { return (cw * MI + mi) * 64 + w4 * 16 + g; };
    if (wg > 0) {
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
            uint32_t qf[KSTEPS][4];
            const int r = (cw * MI + mi) * 64 + w4 * 16 + (lane & 15);
#pragma unroll
            for (int ks = 0; ks < KSTEPS; ++ks)
                ldmatrix_x4(qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3], sQ + swizzled(r, ks * 2 + (lane >> 4)));
            const int row0 = row_of(mi);
            const int pos[2] = {min(q0 + row0, seq.L - 1), min(q0 + row0 + 8, seq.L - 1)};
            float* const rel_row[2] = {sRel + row0 * rel_ld, sRel + (row0 + 8) * rel_ld};
            attention::rel_pos_tables<KSTEPS>(qf, staged, rh_rows, rw_rows, STAGING_LD, seq, pos, rel_row, relw_at,
                                              lane);
        }
    }
    __syncthreads();   // tables complete; the staged Rh / Rw are no longer read: the ring is the producer's

    if (wg == 0) {
        // ------------------------------------------------------------------ producer
        setmaxnreg_dec<Cfg::PRODUCER_REGS>();
        const int chunk = tid & 7, r0 = tid >> 3;   // key slots r0 + 16 i of every tile, this 16-byte chunk
        const uint32_t swz = (uint32_t)((chunk ^ (r0 & 7)) << 4);
        for (int t = 0; t < n_tiles; ++t) {
            const int s = t % STAGES;
            if (t >= STAGES) mbar_wait(empty(s), ((t / STAGES) + 1) & 1);   // use t/STAGES - 1 released
            const uint32_t k_dst = k_slot(s) + r0 * ROW_BYTES + swz, v_dst = k_dst + KV_BYTES;
#pragma unroll
            for (int i = 0; i < attention::BKV / 16; ++i) {
                // Slot r0 + 16 i: column r0 + 16 i of sequence row t.
                bool ok;
                const bf16* src = key_source(seq, img, nullptr, t, r0 + 16 * i, C, head, chunk, ok);
                cp_async_16(k_dst + i * 16 * ROW_BYTES, src, ok);
                cp_async_16(v_dst + i * 16 * ROW_BYTES, ok ? src + C : img, ok);
            }
            cp_async_commit();
            v1_complete_lagging_stage<LAG, STAGES>(t, full(0));
        }
        v1_complete_remaining_stages<LAG, STAGES>(n_tiles, full(0));
        return;
    }

    // ---------------------------------------------------------------------- consumers
    if (cw >= active) return;   // no query of the sequence in this warpgroup's rows
    setmaxnreg_inc<Cfg::CONSUMER_REGS>();
    // The Rw terms of this lane's key columns, per block and row, in registers for the whole loop: the 16 columns
    // 8 n + 2 q4 + e (load_rw).
    float rw[MI][2][8][2];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int r = 0; r < 2; ++r) attention::load_rw(sRel + (row_of(mi) + 8 * r) * rel_ld, relw_at, seq.seq_w, q4,
                                                       rw[mi][r]);

    float o[MI][8][4], m[MI][2], l[MI][2];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
        for (int d = 0; d < 8; ++d) o[mi][d][0] = o[mi][d][1] = o[mi][d][2] = o[mi][d][3] = 0.f;
        m[mi][0] = m[mi][1] = -CUDART_INF_F;
        l[mi][0] = l[mi][1] = 0.f;
    }
    const float scale_log2 = scale * attention::LOG2E;

    // slot s = t % STAGES and its phase (t / STAGES) & 1, kept as counters (no division in the loop)
    for (int t = 0, s = 0, phase = 0; t < n_tiles; ++t, s = s + 1 == STAGES ? 0 : s + 1, phase ^= s == 0) {
        mbar_wait(full(s), phase);
        const uint64_t desc_k = smem_desc(k_slot(s)), desc_v = smem_desc(k_slot(s) + KV_BYTES);

        // S = Q K^T per block: 64 rows x 64 key slots, the k16 steps 32 B apart inside the swizzled rows.
        float sc[MI][8][4];
        wgmma_fence();
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
            const uint64_t desc_q = smem_desc(sQ + (cw * MI + mi) * 64 * ROW_BYTES);
#pragma unroll
            for (int kk = 0; kk < KSTEPS; ++kk) wgmma_ss_m64n64k16(sc[mi], desc_q + 2 * kk, desc_k + 2 * kk, kk > 0);
        }
        wgmma_commit();
        wgmma_wait<0>();

        uint32_t p[MI][4][4];
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
            fence_tiles(sc[mi]);
            const float* rel0 = sRel + row_of(mi) * rel_ld;
            const float* rel1 = rel0 + 8 * rel_ld;
            // Issue-bound: the bias and online softmax of attention.cuh in fewer instructions.
            attention::row_softmax_lazy(sc[mi], scale_log2, rel0[t], rel1[t], rw[mi][0], rw[mi][1], o[mi], m[mi],
                                        l[mi]);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) attention::probs_fragment(sc[mi], kk, p[mi][kk]);
            fence_tiles(o[mi]);        // the rescaled O and the packed P are in their registers ...
            fence_fragments(p[mi]);
        }
        wgmma_fence();                 // ... before the MMAs may read them
        // O += P V per block: 16 key slots per k16 step, 2048 B of V apart.
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) wgmma_rs_m64n64k16_tb(o[mi], p[mi][kk], desc_v + kk * (2048 >> 4));
        wgmma_commit();
        wgmma_wait<0>();
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_tiles(o[mi]);
        if (lane == 0) mbar_arrive(empty(s));   // both products done with slot s
    }

#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
        const int row0 = row_of(mi);
        const int tok[2] = {seq.token(q0 + row0), seq.token(q0 + row0 + 8)};   // padding, past the end: not stored
        attention::store_rows(o[mi], l[mi], tok, out_img, C, head * HD, q4);
    }
#else
    __trap();   // not an sm_90a build: the host never launches this kernel here
#endif
}

// The windowed block with half a window per CTA (WindowHalves; the header says why and how): blockIdx.x = which 128
// query slots of the window, y = head, z = image x window.
__device__ __forceinline__ void attention_window_halves_sm90(const bf16* __restrict__ qkv,
                                                             const bf16* __restrict__ qkv_bias,
                                                             const bf16* __restrict__ rel_h,
                                                             const bf16* __restrict__ rel_w, bf16* __restrict__ out,
                                                             int H, int W, int heads, int window, float scale) {
#ifdef SAMSTREAM_SM90A
    using namespace gemm_sm90;
    using Cfg = WindowHalves;
    constexpr int KSTEPS = HD / 16, CHUNKS = HD / 8, R = Cfg::ROWS_PER_TILE;

    const int tid = threadIdx.x, cw = tid / 128, lane = tid & 31;   // cw: this thread's consumer warpgroup
    const int head = blockIdx.y;
    const int C = heads * HD, row_stride = 3 * C;
    int b;
    const attention::Sequence seq = attention::sequence_of(blockIdx.z, H, W, window, b);
    const int q0 = blockIdx.x * Cfg::BQ;
    const bf16* img = qkv + (size_t)b * H * W * row_stride;
    bf16* out_img = out + (size_t)b * H * W * C;
    const int n_tiles = (seq.seq_h + R - 1) / R;
    // Consumer warpgroups with at least one query of the window (>= 1: the host launches ceil(L / 128) halves).
    const int active = min(Cfg::CONSUMERS, (seq.L - q0 + 63) / 64);

    extern __shared__ unsigned char smem_raw[];
    const uint32_t base = (smem_addr(smem_raw) + 1023) & ~1023u;   // swizzled tiles need 1024-byte alignment
    unsigned char* const base_ptr = smem_raw + (base - smem_addr(smem_raw));
    const uint32_t sQ = base;
    const uint32_t kv = base + Cfg::Q_BYTES;                        // key tile t: K at kv + 2 t KV, V after it
    const uint32_t staging = kv + Cfg::KV_ALL_BYTES;                // Rh rows, then Rw rows (ldmatrix layout)
    const bf16* staged = reinterpret_cast<const bf16*>(base_ptr + Cfg::Q_BYTES + Cfg::KV_ALL_BYTES);
    float* const sRel = reinterpret_cast<float*>(base_ptr + Cfg::Q_BYTES + Cfg::KV_ALL_BYTES + Cfg::STAGING_BYTES);
    const int rel_ld = seq.seq_h + R + seq.seq_w + 1;
    const int relw_at = seq.seq_h + R;

    // ---- prologue: Q and the staged tables (commit group 0), then the window's K and V (group 1) --------------
    for (int c = tid; c < Cfg::BQ * CHUNKS; c += Cfg::THREADS) {
        const int r = c / CHUNKS, ch = c % CHUNKS;
        const int tok = seq.token(q0 + r);   // padding and rows past the window: zeros (never stored)
        cp_async_16(sQ + swizzled(r, ch), tok >= 0 ? img + (size_t)tok * row_stride + head * HD + ch * 8 : img,
                    tok >= 0);
    }
    const int2 table_rows = attention::stage_rel_tables<HD>(staging, STAGING_LD, rel_h, rel_w, seq, tid, Cfg::THREADS);
    const int rh_rows = table_rows.x, rw_rows = table_rows.y;
    cp_async_commit();
    // Window slot i = 16 dh + kw (dh < 16: window row, kw < 16: column) is slot i % 64 of key tile i / 64: columns
    // and rows past the window zeros, padded positions the qkv bias (key_source).
    for (int c = tid; c < n_tiles * attention::BKV * CHUNKS; c += Cfg::THREADS) {
        const int slot = c / CHUNKS, ch = c % CHUNKS;
        const int row = slot / Cfg::ROW_SLOTS, col = slot % Cfg::ROW_SLOTS;
        bool ok;
        const bf16* src = key_source(seq, img, qkv_bias, row, col, C, head, ch, ok);
        const uint32_t k_dst = kv + (slot / attention::BKV) * 2 * KV_BYTES + swizzled(slot % attention::BKV, ch);
        cp_async_16(k_dst, src, ok);
        cp_async_16(k_dst + KV_BYTES, ok ? src + C : img, ok);
    }
    cp_async_commit();
    // The -inf entries of every row: Rh of tile rows past the window, and the last one.
    for (int idx = tid; idx < Cfg::BQ * (R + 1); idx += Cfg::THREADS) {
        const int r = idx / (R + 1), k = idx % (R + 1);
        sRel[r * rel_ld + (k < R ? seq.seq_h + k : rel_ld - 1)] = -CUDART_INF_F;
    }
    cp_async_wait<1>();
    __syncthreads();   // Q and the staged tables visible to all (K and V may still be landing)

    // This lane's rows: 64 cw + 16 w + g and + 8, CTA-local. The tables of the warp's rows on the tensor cores.
    const int w4 = (tid >> 5) & 3, g = lane >> 2, q4 = lane & 3;
    const int row0 = cw * 64 + w4 * 16 + g;
    if (cw < active) {
        uint32_t qf[KSTEPS][4];
        const int r = cw * 64 + w4 * 16 + (lane & 15);
#pragma unroll
        for (int ks = 0; ks < KSTEPS; ++ks)
            ldmatrix_x4(qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3], sQ + swizzled(r, ks * 2 + (lane >> 4)));
        const int pos[2] = {min(q0 + row0, seq.L - 1), min(q0 + row0 + 8, seq.L - 1)};
        float* const rel_row[2] = {sRel + row0 * rel_ld, sRel + (row0 + 8) * rel_ld};
        attention::rel_pos_tables<KSTEPS>(qf, staged, rh_rows, rw_rows, STAGING_LD, seq, pos, rel_row, relw_at, lane);
    }
    cp_async_wait<0>();
    fence_proxy_async();   // this thread's copies (Q, K, V) went through the generic proxy; wgmma reads via the async one
    __syncthreads();       // K, V and the tables complete and visible to all

    if (cw >= active) return;   // no query of the window in this warpgroup's rows
    // The Rw terms of this lane's key columns kw = 8 (n % 2) + 2 q4 + e, per row, for the whole loop.
    float rw[2][2][2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const float* rel = sRel + (row0 + 8 * r) * rel_ld;
#pragma unroll
        for (int half = 0; half < 2; ++half)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int kw = 8 * half + 2 * q4 + e;
                rw[r][half][e] = kw < seq.seq_w ? rel[relw_at + kw] : -CUDART_INF_F;
            }
    }

    float o[8][4], m[2], l[2];
#pragma unroll
    for (int d = 0; d < 8; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.f;
    m[0] = m[1] = -CUDART_INF_F;
    l[0] = l[1] = 0.f;
    const float scale_log2 = scale * attention::LOG2E;
    const uint64_t desc_q = smem_desc(sQ + cw * 64 * ROW_BYTES);
    const float* rel0 = sRel + row0 * rel_ld;
    const float* rel1 = rel0 + 8 * rel_ld;

    for (int t = 0; t < n_tiles; ++t) {
        const uint32_t k_tile = kv + t * 2 * KV_BYTES;
        const uint64_t desc_k = smem_desc(k_tile), desc_v = smem_desc(k_tile + KV_BYTES);

        // S = Q K^T: 64 rows x 64 key slots, the k16 steps 32 B apart inside the swizzled rows.
        float sc[8][4];
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) wgmma_ss_m64n64k16(sc, desc_q + 2 * kk, desc_k + 2 * kk, kk > 0);
        wgmma_commit();
        wgmma_wait<0>();

        uint32_t p[4][4];
        fence_tiles(sc);
        float h0[4], h1[4];   // Rh terms of the tile's 4 window rows (-inf past the window)
#pragma unroll
        for (int dh = 0; dh < 4; ++dh) {
            h0[dh] = rel0[t * R + dh];
            h1[dh] = rel1[t * R + dh];
        }
        add_window_bias(sc, scale_log2, h0, h1, rw[0], rw[1]);
        attention::online_softmax(sc, o, m, l);
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) attention::probs_fragment(sc, kk, p[kk]);
        fence_tiles(o);        // the rescaled O and the packed P are in their registers ...
        fence_fragments(p);
        wgmma_fence();         // ... before the MMAs may read them
        // O += P V: 16 key slots per k16 step, 2048 B of V apart.
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) wgmma_rs_m64n64k16_tb(o, p[kk], desc_v + kk * (2048 >> 4));
        wgmma_commit();
        wgmma_wait<0>();
        fence_tiles(o);
    }

    const int tok[2] = {seq.token(q0 + row0), seq.token(q0 + row0 + 8)};   // padding, past the window: not stored
    attention::store_rows(o, l, tok, out_img, C, head * HD, q4);
#else
    __trap();   // not an sm_90a build: the host never launches this kernel here
#endif
}

}  // namespace attention_sm90
