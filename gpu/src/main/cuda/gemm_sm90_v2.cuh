// Hopper (sm_90a) GEMM, pipeline v2: the same function, arguments, tiles, operand layout and epilogue as
// gemm_sm90.cuh (v1, the default), with the producer no longer waiting for its own copies. Selected with
// -Dsamstream.cuda.gemmPipeline=v2 (CudaKernels.GemmTile.H2_*); v1 is untouched.
//
// Why. v1's producer marks stage kt full only after cp.async.wait_group LAG has seen its own copies of
// tile kt land, so each producer thread blocks on global-memory latency and only ~2 stages of copies are
// ever in flight (issue #3 / #5). In v2 the hardware completes the stage: after issuing its copies for a
// stage, each producer thread executes cp.async.mbarrier.arrive.noinc on that stage's full-barrier, which
// makes the barrier count one arrival for the thread when all of the thread's earlier cp.async have
// landed. The producer only ever waits on empty-barriers, so every free slot of the ring is being filled
// at once: 4 stages at 128x256 (48 KB each) and 256x192 (56 KB), 7 at 128x128 (32 KB).
//
// Synchronisation protocol (g = the CTA's running k-tile counter, over all its output tiles, identical in
// producer and consumers because both walk the same tiles t = blockIdx.x, + gridDim.x, ... and the same
// k_tiles per tile; s = g % STAGES the slot; u = g / STAGES the slot's use number):
//
//   full[s]  init count 128. Arrivals: each of the 128 producer threads, once per use, asynchronously
//            (cp.async.mbarrier.arrive.noinc: the pending count is not incremented, so the asynchronous
//            arrival is one of the 128 expected). Phase u completes when all 128 threads' copies of use u
//            (and everything they issued before) have been written to shared memory.
//            Waiters: every consumer thread, parity u & 1, before reading slot s for use u.
//   empty[s] init count 8. Arrivals: lane 0 of each of the 8 consumer warps, once per use, after
//            wgmma.wait_group shows that the warpgroup's MMAs reading slot s (use u) have completed.
//            Phase u completes when both consumer warpgroups are done with use u.
//            Waiter: every producer thread before refilling slot s for use u + 1 (g >= STAGES),
//            parity (u - 1) & 1 = the completion of empty[s]'s phase u - 1 (use u - 1 released).
//
// Why no phase can be skipped (try_wait.parity only tells the last two phases apart):
//   - full[s] phase u + 1 needs the producer's copies of use u + 1, which it issues only after empty[s]
//     phase u, which needs every consumer warp to have waited on full[s] phase u and consumed it. So while
//     a consumer waits on phase u, full[s] has completed at most phase u, and at least phase u - 1 (the
//     consumer waited for that one itself: every consumer thread waits on every use, in order).
//   - empty[s] phase u needs the consumers to have consumed use u, which needs full[s] phase u, which
//     needs the producer's copies of use u, issued after its wait on empty[s] phase u - 1. So while the
//     producer waits on phase u - 1, empty[s] has completed at most phase u - 1, and at least u - 2 (the
//     producer waited for it before issuing use u - 1).
//   - An asynchronous arrival of use u + 1 cannot reach full[s] before phase u completes: the copies of use
//     u + 1 are issued after empty[s] phase u, i.e. after phase u of full[s] completed.
// tools/hopper_pipeline_model.py checks this protocol in random interleavings (copies landing out of order,
// asynchronous MMAs, 2-7 stages, 1-15 k tiles, several output tiles per CTA) and that it catches broken
// variants (refill without the empty wait, releasing the slot being read, releasing before wgmma.wait_group).
//
// Memory ordering. cp.async writes shared memory through the generic proxy and wgmma reads it through the
// async proxy. v1's producer fences (fence.proxy.async) after wait_group; in v2 the producer never observes
// its copies, so each consumer thread executes fence.proxy.async.shared::cta after its full-barrier wait
// (which acquires the copies' writes) and before its first wgmma on the slot. In the other direction the
// consumer's empty arrival follows wgmma.wait_group, so the MMAs' reads of the slot are complete before
// the producer's next copies into it are issued (as in v1).
//
// End of the kernel. A producer thread ends with cp.async.wait_all so that no copy is in flight when it
// exits (the consumers still wait for the full-barriers those copies complete); the last uses' empty
// arrivals are never waited on (harmless: barriers die with the CTA).
//
// Not done here: a ping-pong schedule (each consumer warpgroup owning whole output tiles, alternately, so one's
// epilogue overlaps the other's main loop). Note for whoever does it: the consumers then skip each other's k
// tiles in the ring, and try_wait.parity cannot tell phase u - 1 (incomplete) from phase u + 1 (complete): a
// warpgroup that waits on phase u of a slot while the other's use u - 1 of it has not completed (copies land out
// of order across stages) would pass at once. The math-ordering barrier between the two warpgroups (one starts
// its main loop only after the other's has passed all its full waits) is needed for correctness, not only
// speed. tools/hopper_pipeline_model.py is the place to check such a schedule first. Persistent launch
// (CudaKernels' gemmPersistent) already lets this producer fill the whole ring for the next tile during the
// epilogue.
//
// The kernel body exists only for sm_90a; other targets of the fatbin get a body that traps (see
// gemm_sm90.cuh), and CudaKernels launches these kernels only on compute capability 9.0.
#pragma once

#include "gemm_sm90.cuh"

namespace gemm_sm90_v2 {

using gemm_sm90::BK;

template <int BM, int BN, int STAGES>
struct Config {
    static constexpr int THREADS = 384;                 // producer + 2 consumers
    static constexpr int MI = BM / 128;                 // m64 blocks per consumer warpgroup
    static constexpr int A_BYTES = BM * BK * 2;
    static constexpr int B_BYTES = BN * BK * 2;
    static constexpr int TILE_BYTES = STAGES * (A_BYTES + B_BYTES);
    // Same formula as v1 (CudaKernels.GemmTile mirrors it): tiles + 2 barriers per stage + 1024 B alignment slack.
    static constexpr int SMEM_BYTES = TILE_BYTES + 2 * STAGES * 8 + 1024;
    static constexpr int ACC = BN / 2;
    // As in v1: more than 168 accumulator-heavy registers per consumer thread (256x192: 192 accumulators) move
    // registers from the producer (setmaxnreg 40 / 232).
    static constexpr bool REBALANCE = MI * ACC > 128;
    // Residual read-ahead of store_tile: 2 column tiles (ptxas: 4 spills at 128x256, where this producer's
    // running pointers stay live).
    static constexpr int EPILOGUE_GROUP = 2;
    static_assert(STAGES >= 2, "the ring needs at least 2 stages");
    static_assert(BM == 128 || BM == 256, "two consumer warpgroups of 64 or 128 rows");
    static_assert(BN == 128 || BN == 192 || BN == 256, "wgmma tile widths 128, 192, 256");
    static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 CTA can have");
};

#ifdef SAMSTREAM_SM90A

// One asynchronous arrival on `bar` when all of this thread's earlier cp.async have completed; .noinc: the
// arrival counts against the barrier's expected count (init 128 = one per producer thread).
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(uint32_t bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

#endif  // SAMSTREAM_SM90A

template <int BM, int BN, int STAGES>
__device__ __forceinline__ void gemm_bf16_sm90_v2(const bf16* __restrict__ A, const bf16* __restrict__ W,
                                                  const bf16* __restrict__ bias, const bf16* residual, bf16* C,
                                                  int M, int N, int K, int epilogue) {
#ifdef SAMSTREAM_SM90A
    using namespace gemm_sm90;
    using Cfg = Config<BM, BN, STAGES>;
    constexpr int ACC = Cfg::ACC, MI = Cfg::MI;

    extern __shared__ unsigned char smem_raw[];
    const Ring<STAGES, Cfg::A_BYTES, Cfg::B_BYTES> ring(smem_addr(smem_raw));   // A, W slots and the barriers

    const int tid = threadIdx.x, wg = tid / 128;
    const int k_tiles = (K + BK - 1) / BK;
    const int n_tiles = (N + BN - 1) / BN;
    const int tiles = ((M + BM - 1) / BM) * n_tiles;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(ring.full(s), 128);   // one asynchronous (noinc) arrival per producer thread and use
            mbar_init(ring.empty(s), 8);    // lane 0 of each consumer warp, once per use
        }
    }
    __syncthreads();   // the barriers' initialisation before any arrival or wait

    if (wg == 0) {
        // ------------------------------------------------------------------ producer (warpgroup 0)
        if constexpr (Cfg::REBALANCE) setmaxnreg_dec<40>();
        const int chunk = tid & 7;               // this thread's 16-byte chunk of every row it copies
        const int row0 = tid >> 3;               // rows row0, row0 + 16, ...
        const uint32_t swz = (uint32_t)((chunk ^ (row0 & 7)) * 16);   // row0 + 16 i has the same row % 8
        int s = 0;                               // slot of k tile g
        uint32_t phase = 0;                      // (g / STAGES) & 1
        int g = 0;                               // k tiles issued by this CTA so far (all its output tiles)
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
            const int block_m = (t / n_tiles) * BM, block_n = (t % n_tiles) * BN;
            for (int kt = 0; kt < k_tiles; ++kt, ++g) {
                // Slot s held use u - 1 = g / STAGES - 1: wait until both consumers released it (empty phase
                // u - 1, parity phase ^ 1). The first STAGES k tiles find every slot unused.
                if (g >= STAGES) mbar_wait(ring.empty(s), phase ^ 1);
                load_k_tile<BM, BN>(ring.a(s), ring.b(s), A, W, M, N, K, block_m, block_n,
                                    kt, chunk, row0, swz);
                // full[s] phase u gets this thread's arrival when the copies above have landed; no wait here.
                cp_async_mbar_arrive_noinc(ring.full(s));
                if (++s == STAGES) {
                    s = 0;
                    phase ^= 1;
                }
            }
        }
        cp_async_wait_all();   // no copy in flight when the thread exits
        return;
    }

    // ---------------------------------------------------------------------- consumers (warpgroups 1, 2)
    if constexpr (Cfg::REBALANCE) setmaxnreg_inc<232>();
    const int cw = wg - 1;                          // consumer 0: rows 0 .. BM/2-1, 1: the rest
    const int warp = (tid >> 5) & 3, lane = tid & 31;
    const bool has_bias = (epilogue & gemm::BIAS) != 0, has_gelu = (epilogue & gemm::GELU) != 0,
               has_res = (epilogue & gemm::RESIDUAL) != 0;
    float acc[MI][ACC];
    int s = 0;                                      // slot of k tile g
    uint32_t phase = 0;                             // (g / STAGES) & 1
    int prev = 0;                                   // slot of k tile g - 1 (its MMAs may still run)
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int block_m = (t / n_tiles) * BM, block_n = (t % n_tiles) * BN;
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int i = 0; i < ACC; ++i) acc[mi][i] = 0.f;

        for (int kt = 0; kt < k_tiles; ++kt) {
            mbar_wait(ring.full(s), phase);   // use u = g / STAGES of slot s has landed
            fence_proxy_async();         // the copies (generic proxy) before this thread's wgmma (async proxy) reads
            // Returns once k tile g - 1's MMAs are done: its slot can be refilled.
            mma_k_tile<BN>(acc, ring.a(s) + cw * (BM / 2) * 128, ring.b(s));
            if (kt > 0 && lane == 0) mbar_arrive(ring.empty(prev));
            prev = s;
            if (++s == STAGES) {
                s = 0;
                phase ^= 1;
            }
        }
        wgmma_wait<0>();
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
        if (lane == 0) mbar_arrive(ring.empty(prev));   // the tile's last slot: free for the producer

        store_tile<BM, BN, Cfg::EPILOGUE_GROUP>(acc, bias, residual, C, M, N, block_m, cw * (BM / 2), block_n, warp, lane, has_bias,
                           has_gelu, has_res);   // the same epilogue as v1
    }
#else
    __trap();   // not an sm_90a build: the host never launches this kernel here
#endif
}

}  // namespace gemm_sm90_v2
