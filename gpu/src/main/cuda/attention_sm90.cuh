// Hopper (sm_90a) flash attention for the global blocks of SAM's image encoder: the function of
// attention.cuh's ONE_ROW kernel (key tiles of one sequence row, sequences wider than 32 tokens, no window
// padding) for head dim 64 (vit_b, vit_l), with both products on warpgroup MMA (wgmma).
//
// Why. The mma.sync kernel reaches ~170 TFLOP/s on the H200 (bench/results/2026-11-30-h200-wgmma.md): each
// warp re-reads every K and V tile from shared memory through ldmatrix for its 16 rows, and one barrier per
// tile holds all warps together. Here the tensor cores read K and V from shared memory once per 64 query rows,
// P stays in registers as wgmma's A operand, and the warpgroups never wait for each other: a producer
// warpgroup streams K/V tiles through a ring of STAGES slots with full / empty mbarriers, so one consumer's
// softmax overlaps another's matrix products.
//
// CTA: 4 warpgroups (512 threads, one CTA per SM): warpgroup 0 the producer, warpgroups 1..3 the consumers,
// 64 query rows each (BQ = 192 queries per CTA). Grid: x = ceil(L / 192) query blocks, y = heads, z = images.
// Consumers with no query of the sequence (the last block) leave after the prologue; the empty barriers
// count only the active ones.
//
// Prologue (all 512 threads): Q (192 rows) and the tables Rh, Rw into shared memory; each consumer warp makes
// the relative position tables of its 16 rows on the tensor cores (attention::rel_pos_tables, the same code as
// the mma.sync kernel), and reads the Rw terms of its key columns into registers (load_rw). Then:
//   producer: for tile t (slot s = t % STAGES): wait empty[s] (once the ring has wrapped), cp.async the tile's K
//     and V rows (the keys of sequence row t; slots past the row: zeros), commit; then, LAG = STAGES - 2 tiles
//     behind, cp.async.wait_group + fence.proxy.async (the copies go through the generic proxy, wgmma reads
//     through the async proxy) + arrive on full[(t - LAG) % STAGES]. The protocol of gemm_sm90.cuh (v1).
//   consumer: wait full[s]; S = Q K^T (4 wgmma m64n64k16, both operands in shared memory); bias and mask
//     (add_row_bias), online softmax (online_softmax), P to bf16 A fragments (probs_fragment); O += P V
//     (4 wgmma m64n64k16 with A from registers, V as an N-major B operand); after both products are done,
//     lane 0 of each warp arrives on empty[s].
//
// Shared-memory layouts (1024-byte aligned, rows of 64 bf16 = 128 B with the 128-byte swizzle: 16-byte chunk
// c of row r at chunk c ^ (r % 8)). Q [192 rows][64 d] and K [64 keys][64 d] are K-major operands, exactly as
// in gemm_sm90.cuh. V [64 keys][64 d] in the same layout is the B operand of P.V in N-major form: a 128B
// "MN-major" swizzle atom is 8 keys x 64 d (1024 B), the next 8 keys 1024 B further (the descriptor's stride
// byte offset), so the descriptor is the same as for K and a k16 step advances 16 keys = 2048 B.
//
// Numerics are those of the mma.sync kernel (fp32 scores and sums in the log2 domain, P rounded to bf16 for
// P.V, the output rounded to bf16); the tests compare both with the same double-precision reference.
// The kernel body exists only for sm_90a (SAMSTREAM_SM90A); elsewhere it traps, and CudaKernels launches it
// only on compute capability 9.0.
#pragma once

#include "attention.cuh"
#include "gemm_sm90.cuh"

namespace attention_sm90 {

constexpr int HD = 64;
constexpr int CONSUMERS = 3;                        // consumer warpgroups
constexpr int BQ = 64 * CONSUMERS;                  // queries per CTA
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int STAGES = 5;
constexpr int LAG = STAGES - 2;
constexpr int ROW_BYTES = HD * 2;                   // 128: one swizzle-atom row
constexpr int KV_BYTES = attention::BKV * ROW_BYTES;   // one K or V tile: 8 KB
constexpr int Q_BYTES = BQ * ROW_BYTES;
constexpr int MAX_SIDE = 64;
// The tables of attention.cuh's layout (rel_stride with one row per tile), sized for the largest grid.
constexpr int REL_BYTES = BQ * attention::rel_stride(MAX_SIDE, MAX_SIDE) * 4;
constexpr int STAGING_LD = HD + attention::SMEM_PAD;   // Rh / Rw rows while the tables are made (ldmatrix layout)
// Q | STAGES x (K, V) | tables | full[STAGES], empty[STAGES] | slack to align the base to 1024 B.
// CudaKernels.ATTN_SM90_SMEM must equal this (checked below).
constexpr int SMEM_BYTES = Q_BYTES + STAGES * 2 * KV_BYTES + REL_BYTES + 2 * STAGES * 8 + 1024;
static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 CTA can have");
static_assert(SMEM_BYTES == 207440, "CudaKernels.ATTN_SM90_SMEM holds this number");
static_assert(2 * 128 * STAGING_LD * 2 <= STAGES * 2 * KV_BYTES, "the staged tables must fit in the ring");
// Register split (setmaxnreg): 128 per thread at launch (512 threads, one CTA per SM); the producer gives
// back to 40, the consumers take 152 (40 x 128 + 152 x 384 <= 65536).
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 152;

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

#endif  // SAMSTREAM_SM90A

__device__ __forceinline__ void attention_fwd_sm90(const bf16* __restrict__ qkv, const bf16* __restrict__ rel_h,
                                                   const bf16* __restrict__ rel_w, bf16* __restrict__ out, int H,
                                                   int W, int heads, float scale) {
#ifdef SAMSTREAM_SM90A
    using namespace gemm_sm90;
    using attention::Sequence;
    constexpr int KSTEPS = HD / 16, CHUNKS = HD / 8;

    const int tid = threadIdx.x, wg = tid / 128, lane = tid & 31;
    const int head = blockIdx.y, b = blockIdx.z;
    const int C = heads * HD, row_stride = 3 * C;
    Sequence seq;
    seq.H = H;
    seq.W = W;
    seq.oy = seq.ox = 0;
    seq.seq_h = H;
    seq.seq_w = W;
    seq.L = H * W;
    seq.inv_seq_w = 1.0f / W;
    const int q0 = blockIdx.x * BQ;
    const bf16* img = qkv + (size_t)b * seq.L * row_stride;
    bf16* out_img = out + (size_t)b * seq.L * C;
    // Consumer warpgroups with at least one query of the sequence (the last query block may have fewer).
    const int active = min(CONSUMERS, (seq.L - q0 + 63) / 64);

    extern __shared__ unsigned char smem_raw[];
    const uint32_t base = (smem_addr(smem_raw) + 1023) & ~1023u;   // swizzled tiles need 1024-byte alignment
    unsigned char* const base_ptr = smem_raw + (base - smem_addr(smem_raw));
    const uint32_t sQ = base;
    const uint32_t ring = base + Q_BYTES;                           // slot s: K at ring + 2 s KV, V after it
    float* const sRel = reinterpret_cast<float*>(base_ptr + Q_BYTES + STAGES * 2 * KV_BYTES);
    const uint32_t bars = base + Q_BYTES + STAGES * 2 * KV_BYTES + REL_BYTES;
    auto k_slot = [&](int s) { return ring + s * 2 * KV_BYTES; };
    auto full = [&](int s) { return bars + 8 * s; };
    auto empty = [&](int s) { return bars + 8 * (STAGES + s); };
    const int rel_ld = attention::rel_stride(seq.seq_h, seq.seq_w);
    const int relw_at = seq.seq_h + 1;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), 128);          // every producer thread, once per tile
            mbar_init(empty(s), 4 * active);  // lane 0 of every active consumer warp, once per tile
        }
    }

    // ---- prologue: Q and the staged tables (the ring is free until the producer starts) ----------------
    for (int c = tid; c < BQ * CHUNKS; c += THREADS) {
        const int r = c / CHUNKS, ch = c % CHUNKS, i = q0 + r;
        const bool ok = i < seq.L;   // rows past the sequence: zeros (their outputs are never stored)
        cp_async_16(sQ + swizzled(r, ch), ok ? img + (size_t)i * row_stride + head * HD + ch * 8 : img, ok);
    }
    const bf16* staged = reinterpret_cast<const bf16*>(base_ptr + Q_BYTES);   // Rh rows, then Rw rows, in the ring
    const int2 table_rows = attention::stage_rel_tables<HD>(ring, STAGING_LD, rel_h, rel_w, seq, tid, THREADS);
    const int rh_rows = table_rows.x, rw_rows = table_rows.y;
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();   // Q, the staged tables and the barriers' initialisation visible to all

    // This lane's rows (consumers): 64 c + 16 w + g and + 8, CTA-local.
    const int cw = wg - 1, w4 = (tid >> 5) & 3, g = lane >> 2, q4 = lane & 3;
    const int row0 = cw * 64 + w4 * 16 + g;
    if (wg > 0) {
        uint32_t qf[KSTEPS][4];
        const int r = cw * 64 + w4 * 16 + (lane & 15);
#pragma unroll
        for (int ks = 0; ks < KSTEPS; ++ks)
            ldmatrix_x4(qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3], sQ + swizzled(r, ks * 2 + (lane >> 4)));
        const int pos[2] = {min(q0 + row0, seq.L - 1), min(q0 + row0 + 8, seq.L - 1)};
        float* const rel_row[2] = {sRel + row0 * rel_ld, sRel + (row0 + 8) * rel_ld};
        attention::rel_pos_tables<KSTEPS>(qf, staged, rh_rows, rw_rows, STAGING_LD, seq, pos, rel_row, relw_at, lane);
    }
    __syncthreads();   // tables complete; the staged Rh / Rw are no longer read: the ring is the producer's

    if (wg == 0) {
        // ------------------------------------------------------------------ producer
        setmaxnreg_dec<PRODUCER_REGS>();
        const int chunk = tid & 7, r0 = tid >> 3;   // rows r0 + 16 i of every tile, this 16-byte chunk
        const uint32_t swz = (uint32_t)((chunk ^ (r0 & 7)) << 4);
        const int n_tiles = seq.seq_h;
        for (int t = 0; t < n_tiles; ++t) {
            const int s = t % STAGES;
            if (t >= STAGES) mbar_wait(empty(s), ((t / STAGES) + 1) & 1);   // use t/STAGES - 1 released
            const uint32_t k_dst = k_slot(s) + r0 * ROW_BYTES + swz, v_dst = k_dst + KV_BYTES;
#pragma unroll
            for (int i = 0; i < attention::BKV / 16; ++i) {
                const int key = r0 + 16 * i;               // slot of the tile = column kw of sequence row t
                const bool ok = key < seq.seq_w;
                const bf16* src = ok ? img + (size_t)(t * seq.seq_w + key) * row_stride + C + head * HD + chunk * 8
                                     : img;
                cp_async_16(k_dst + i * 16 * ROW_BYTES, src, ok);
                cp_async_16(v_dst + i * 16 * ROW_BYTES, ok ? src + C : img, ok);
            }
            cp_async_commit();
            if (t >= LAG) {
                cp_async_wait<LAG>();
                fence_proxy_async();
                mbar_arrive(full((t - LAG) % STAGES));
            }
        }
        cp_async_wait<0>();
        fence_proxy_async();
        for (int t = n_tiles > LAG ? n_tiles - LAG : 0; t < n_tiles; ++t) mbar_arrive(full(t % STAGES));
        return;
    }

    // ---------------------------------------------------------------------- consumers
    if (cw >= active) return;   // no query of the sequence in this warpgroup's rows
    setmaxnreg_inc<CONSUMER_REGS>();
    float rw0[8][2], rw1[8][2];
    const float* rel0 = sRel + row0 * rel_ld;
    const float* rel1 = rel0 + 8 * rel_ld;
    attention::load_rw(rel0, relw_at, seq.seq_w, q4, rw0);
    attention::load_rw(rel1, relw_at, seq.seq_w, q4, rw1);

    float o[8][4];
#pragma unroll
    for (int d = 0; d < 8; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.f;
    float m[2] = {-CUDART_INF_F, -CUDART_INF_F}, l[2] = {0.f, 0.f};
    const float scale_log2 = scale * attention::LOG2E;
    const uint64_t desc_q = smem_desc(sQ + cw * 64 * ROW_BYTES);

    for (int t = 0; t < seq.seq_h; ++t) {
        const int s = t % STAGES;
        mbar_wait(full(s), (t / STAGES) & 1);
        const uint64_t desc_k = smem_desc(k_slot(s)), desc_v = smem_desc(k_slot(s) + KV_BYTES);

        // S = Q K^T: 64 rows x 64 keys, the k16 steps 32 B apart inside the swizzled rows.
        float sc[8][4];
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) wgmma_ss_m64n64k16(sc, desc_q + 2 * kk, desc_k + 2 * kk, kk > 0);
        wgmma_commit();
        wgmma_wait<0>();
        fence_tiles(sc);

        attention::add_row_bias(sc, scale_log2, rel0[t], rel1[t], rw0, rw1);
        attention::online_softmax(sc, o, m, l);

        // O += P V: 16 keys per k16 step, 2048 B of V apart.
        uint32_t p[4][4];
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) attention::probs_fragment(sc, kk, p[kk]);
        fence_tiles(o);        // the rescaled O and the packed P are in their registers ...
        fence_fragments(p);
        wgmma_fence();         // ... before the MMAs may read them
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) wgmma_rs_m64n64k16_tb(o, p[kk], desc_v + kk * (2048 >> 4));
        wgmma_commit();
        wgmma_wait<0>();
        fence_tiles(o);
        if (lane == 0) mbar_arrive(empty(s));   // both products done with slot s
    }

    const int tok[2] = {q0 + row0 < seq.L ? q0 + row0 : -1, q0 + row0 + 8 < seq.L ? q0 + row0 + 8 : -1};
    attention::store_rows(o, l, tok, out_img, C, head * HD, q4);
#else
    __trap();   // not an sm_90a build: the host never launches this kernel here
#endif
}

}  // namespace attention_sm90
