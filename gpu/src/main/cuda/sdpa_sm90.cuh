// Hopper (sm_90a) plain attention at head dim 256 (SAM 2's memory attention: one 256-wide head), both products on
// warpgroup MMA: the function of sdpa.cuh (o = softmax(scale q.k^T) . v over three strided row sets, keys past nk
// masked, key splits left for sdpa::combine) with its epilogue (sdpa::store_rows). Why: sdpa.cuh's mma.sync kernel at
// head dim 256 holds 128 output registers per thread next to its Q fragments (254 registers, key tiles of 32); here
// the tensor cores read Q and K from shared memory and P stays in registers as the A operand of P . V.
// Measurements: bench/results/2026-12-03-h200-sam2-sdpa.md.
//
// Schedule (the warp roles and barrier protocol of attention_sm90.cuh's global kernel and gemm_sm90.cuh):
//   one CTA per SM, 384 threads: warpgroup 0 the producer, warpgroups 1 and 2 consumers of 64 queries each
//   (BQ = 128); grid x = (query tile, split), y = heads, z = batches.
//   prologue (all threads): Q [128 rows x 256] into shared memory (cp.async, rows past nq zero), barriers initialised.
//   producer (setmaxnreg down to 40): for local tile i (slot s = i % STAGES): wait empty[s] once the ring wrapped,
//     cp.async the tile's 64 K and V rows (rows past nk zero), commit, then LAG tiles behind wait its copies,
//     fence.proxy.async and arrive on full (gemm_sm90's v1 protocol, tools/hopper_pipeline_model.py).
//   consumers (setmaxnreg up to 232): wait full[s]; S = Q K^T (16 wgmma m64n64k16, both from shared memory); scale,
//     mask, lazy online softmax (attention::softmax_lazy); P to bf16 A fragments; O += P V (4 wgmma m64n256k16, P
//     from registers, V N-major); lane 0 of each warp arrives on empty[s]. Registers: O 128, S 32, P 16.
// Shared-memory layout (1024-byte aligned, 128-byte swizzle as gemm_sm90.cuh): a row of 256 bf16 is four 64-column
// atoms, each operand stored as four blocks [rows][64] (block j holds columns 64 j .. 64 j + 63). S's k16 step kk reads
// block kk / 4 at +32 B (kk % 4); V, the N-major B operand of P . V, is described once with its blocks 8 KB apart as
// the leading byte offset (smem_desc_mn) and 8-key groups 1024 B apart; a k16 step is 16 keys, 2048 B.
// The body exists only for sm_90a (SAMSTREAM_SM90A); elsewhere it traps, and Sam2Kernels launches it only on
// compute capability 9.0.
#pragma once

#include "attention_sm90.cuh"
#include "gemm_sm90_mainloop.cuh"
#include "sdpa.cuh"

namespace sdpa_sm90 {

struct Config {
    static constexpr int HD = 256;
    static constexpr int BLOCKS = HD / 64;               // 64-column swizzle atoms per row
    static constexpr int CONSUMERS = 2;
    static constexpr int BQ = 64 * CONSUMERS;            // queries per CTA
    static constexpr int BKV = 64;                       // keys per tile
    static constexpr int THREADS = 128 * (CONSUMERS + 1);
    static constexpr int STAGES = 2;
    static constexpr int LAG = STAGES - 2;
    static constexpr int Q_BLOCK = BQ * 128;             // one 64-column block of Q: 16 KB
    static constexpr int KV_BLOCK = BKV * 128;           // one 64-column block of a K or V tile: 8 KB
    static constexpr int Q_BYTES = BLOCKS * Q_BLOCK;
    static constexpr int KV_BYTES = BLOCKS * KV_BLOCK;   // one K or V tile: 32 KB
    // Q | STAGES x (K, V) | full[STAGES], empty[STAGES] | slack to align the base to 1024 B.
    static constexpr int SMEM_BYTES = Q_BYTES + STAGES * 2 * KV_BYTES + 2 * STAGES * 8 + 1024;
    // At launch 65536 / 384 = 170 registers per thread; the producer gives back to 40, the consumers take the rest.
    static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
    static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 CTA can have");
    static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 128 * CONSUMERS <= 65536, "register split");
};
#ifdef SAMSTREAM_SM90A

// Byte offset of element column chunk `chunk` (16 bytes, 0..31) of row `row` in an operand of `block_bytes` per
// 64-column block: block chunk / 8, the 128-byte swizzle inside it.
__device__ __forceinline__ uint32_t swizzled(int row, int chunk, int block_bytes) {
    return (uint32_t)((chunk >> 3) * block_bytes + row * 128 + (((chunk & 7) ^ (row & 7)) << 4));
}

// Keeps the compiler from moving accumulator accesses across the asynchronous MMAs.
template <int N>
__device__ __forceinline__ void fence_tiles(float (&d)[N][4]) {
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[n][e])::"memory");
}

#endif  // SAMSTREAM_SM90A

__device__ __forceinline__ void sdpa_fwd_sm90(sdpa::Rows q, sdpa::Rows k, sdpa::Rows v, bf16* __restrict__ o, int o_ld,
                                              long long o_batch, int nq, int nk, float scale, int splits,
                                              float* __restrict__ part_o, float2* __restrict__ part_ml) {
#ifdef SAMSTREAM_SM90A
    using namespace gemm_sm90;
    using Cfg = Config;
    constexpr int HD = Cfg::HD, CHUNKS = HD / 8, KSTEPS = HD / 16, STAGES = Cfg::STAGES, LAG = Cfg::LAG;
    constexpr int BKV = Cfg::BKV;

    const int tid = threadIdx.x, wg = tid / 128, lane = tid & 31;
    const int head = blockIdx.y;
    const long long z = blockIdx.z;
    const int split = blockIdx.x % splits;
    const int q0 = (blockIdx.x / splits) * Cfg::BQ;
    const int all_tiles = (nk + BKV - 1) / BKV, per_split = (all_tiles + splits - 1) / splits;
    const int t0 = min(all_tiles, split * per_split), t1 = min(all_tiles, t0 + per_split);
    const int n_tiles = t1 - t0;
    const bf16* qb = q.base + z * q.batch + head * HD;
    const bf16* kb = k.base + z * k.batch + head * HD;
    const bf16* vb = v.base + z * v.batch + head * HD;

    extern __shared__ unsigned char smem_raw[];
    const uint32_t base = (smem_addr(smem_raw) + 1023) & ~1023u;   // swizzled tiles need 1024-byte alignment
    const uint32_t sQ = base;
    const uint32_t ring = base + Cfg::Q_BYTES;                      // slot s: K at ring + 2 s KV_BYTES, V after it
    const uint32_t bars = ring + STAGES * 2 * Cfg::KV_BYTES;
    auto k_slot = [&](int s) { return ring + s * 2 * Cfg::KV_BYTES; };
    auto full = [&](int s) { return bars + 8 * s; };
    auto empty = [&](int s) { return bars + 8 * (STAGES + s); };

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), 128);                 // every producer thread, once per tile
            mbar_init(empty(s), 4 * Cfg::CONSUMERS);  // lane 0 of every consumer warp, once per tile
        }
    }
    // ---- prologue: Q (rows past nq zero: their scores are finite and never stored) ------------------------------
    for (int c = tid; c < Cfg::BQ * CHUNKS; c += Cfg::THREADS) {
        const int r = c / CHUNKS, ch = c % CHUNKS;
        const bool ok = q0 + r < nq;
        cp_async_16(sQ + swizzled(r, ch, Cfg::Q_BLOCK), ok ? qb + (size_t)(q0 + r) * q.ld + ch * 8 : q.base, ok);
    }
    cp_async_commit();
    cp_async_wait<0>();
    fence_proxy_async();   // the copies went through the generic proxy; wgmma reads through the async one
    __syncthreads();       // Q and the barriers' initialisation visible to all

    if (wg == 0) {
        // ------------------------------------------------------------------ producer
        setmaxnreg_dec<Cfg::PRODUCER_REGS>();
        const int chunk = tid & 31, r0 = tid >> 5;   // rows r0 + 4 i of every tile, this 16-byte chunk of the row
        for (int i = 0; i < n_tiles; ++i) {
            const int s = i % STAGES;
            if (i >= STAGES) mbar_wait(empty(s), ((i / STAGES) + 1) & 1);   // use i / STAGES - 1 released
            const uint32_t k_dst = k_slot(s), v_dst = k_dst + Cfg::KV_BYTES;
            const int key0 = (t0 + i) * BKV;
#pragma unroll 4
            for (int j = 0; j < BKV / 4; ++j) {
                const int r = r0 + 4 * j, key = key0 + r;
                const bool ok = key < nk;
                const uint32_t at = swizzled(r, chunk, Cfg::KV_BLOCK);
                cp_async_16(k_dst + at, ok ? kb + (size_t)key * k.ld + chunk * 8 : k.base, ok);
                cp_async_16(v_dst + at, ok ? vb + (size_t)key * v.ld + chunk * 8 : v.base, ok);
            }
            cp_async_commit();
            v1_complete_lagging_stage<LAG, STAGES>(i, full(0));
        }
        v1_complete_remaining_stages<LAG, STAGES>(n_tiles, full(0));
        return;
    }

    // ---------------------------------------------------------------------- consumers
    setmaxnreg_inc<Cfg::CONSUMER_REGS>();
    const int cw = wg - 1, w4 = (tid >> 5) & 3, g = lane >> 2, q4 = lane & 3;
    float acc[HD / 8][4], m[2] = {-CUDART_INF_F, -CUDART_INF_F}, l[2] = {0.f, 0.f};
#pragma unroll
    for (int d = 0; d < HD / 8; ++d) acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.f;
    const float scale_log2 = scale * attention::LOG2E;
    const float no_offset[2] = {0.f, 0.f};
    const uint32_t q_rows = sQ + cw * 64 * 128;   // this warpgroup's 64 rows in every block of Q

    for (int i = 0, s = 0, phase = 0; i < n_tiles; ++i, s = s + 1 == STAGES ? 0 : s + 1, phase ^= s == 0) {
        mbar_wait(full(s), phase);
        const uint32_t k_tile = k_slot(s);

        // S = Q K^T: 64 rows x 64 keys; k16 step kk in block kk / 4, 32 B per step inside the swizzled rows.
        float sc[BKV / 8][4];
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            const uint32_t blk = (kk >> 2);
            attention_sm90::wgmma_ss_m64n64k16(sc, smem_desc(q_rows + blk * Cfg::Q_BLOCK) + 2 * (kk & 3),
                                               smem_desc(k_tile + blk * Cfg::KV_BLOCK) + 2 * (kk & 3), kk > 0);
        }
        wgmma_commit();
        wgmma_wait<0>();
        fence_tiles(sc);

        // Into the log2 domain; keys past nk (the last tile only) masked.
        const int keys = nk - (t0 + i) * BKV;
#pragma unroll
        for (int n = 0; n < BKV / 8; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const bool live = keys >= BKV || n * 8 + q4 * 2 + e < keys;
                sc[n][e] = live ? sc[n][e] * scale_log2 : -CUDART_INF_F;
                sc[n][2 + e] = live ? sc[n][2 + e] * scale_log2 : -CUDART_INF_F;
            }
        attention::softmax_lazy(sc, no_offset, acc, m, l);
        uint32_t p[BKV / 16][4];
#pragma unroll
        for (int kk = 0; kk < BKV / 16; ++kk) attention::probs_fragment(sc, kk, p[kk]);
        fence_tiles(acc);   // the rescaled O and the packed P are in their registers ...
#pragma unroll
        for (int kk = 0; kk < BKV / 16; ++kk)
#pragma unroll
            for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(p[kk][e])::"memory");
        wgmma_fence();      // ... before the MMAs may read them

        // O += P V: 16 keys (2048 B of every V block) per k16 step.
        const uint64_t desc_v = smem_desc_mn(k_tile + Cfg::KV_BYTES, Cfg::KV_BLOCK);
#pragma unroll
        for (int kk = 0; kk < BKV / 16; ++kk)
            wgmma_m64n256k16_rs_tb(reinterpret_cast<float(&)[128]>(acc), p[kk], desc_v + kk * (2048 >> 4));
        wgmma_commit();
        wgmma_wait<0>();
        fence_tiles(acc);
        if (lane == 0) mbar_arrive(empty(s));   // both products done with slot s
    }

    sdpa::store_rows(acc, m, l, q0 + cw * 64 + w4 * 16 + g, q4, o + z * o_batch + head * HD, o_ld, nq, HD,
                     sdpa::Split{splits, split, (int)z, (int)gridDim.z, (int)gridDim.y, head, part_o, part_ml});
#else
    __trap();   // not an sm_90a build: the host never launches this kernel here
#endif
}

}  // namespace sdpa_sm90
