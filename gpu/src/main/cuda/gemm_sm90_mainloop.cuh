// The Hopper GEMM's mainloop pieces (sm_90a): the cp.async producer's copies of one k tile into the 128-byte-swizzled
// ring (load_k_tile) and its completion protocol (v1_complete_*), the ring's layout (Ring), and one k tile of a
// consumer warpgroup's wgmma (mma_k_tile). gemm_sm90.cuh's header describes the pipeline they make.
#pragma once

#include "common.cuh"
#include "gemm_sm90_ptx.cuh"

namespace gemm_sm90 {

constexpr int BK = 64;   // one 128-byte swizzle atom of bf16 per row

#ifdef SAMSTREAM_SM90A

// ---- the v1 producer protocol (see the header), shared with gemm_sparse_sm90.cuh and attention_sm90.cuh -------

// After a producer thread committed its copies of k tile g (stage g % STAGES): from the LAG-th on, wait until its
// copies of k tile g - LAG have landed, make them visible to the async proxy (wgmma reads there) and arrive on that
// stage's full barrier. full0: the address of full[0]; full[s] = full0 + 8 s.
template <int LAG, int STAGES>
__device__ __forceinline__ void v1_complete_lagging_stage(int g, uint32_t full0) {
    if (g >= LAG) {
        cp_async_wait<LAG>();
        fence_proxy_async();
        mbar_arrive(full0 + 8 * ((g - LAG) % STAGES));
    }
}

// After the last of its `issued` k tiles: wait for all its copies and arrive for the stages not yet completed.
template <int LAG, int STAGES>
__device__ __forceinline__ void v1_complete_remaining_stages(int issued, uint32_t full0) {
    cp_async_wait<0>();
    fence_proxy_async();
    for (int j = issued > LAG ? issued - LAG : 0; j < issued; ++j) mbar_arrive(full0 + 8 * (j % STAGES));
}

// ---- the pieces the Hopper GEMMs (this one, gemm_sm90_tma.cuh) share -----------------

// Their dynamic shared memory: STAGES slots of A (A_BYTES each), then STAGES slots of W (B_BYTES each), then the
// mbarriers full[STAGES] and empty[STAGES], from the raw base aligned up to 1024 B (the 128-byte swizzle is a
// function of the address bits). Config::SMEM_BYTES (tiles + 16 B per stage + 1024 B slack) covers it.
template <int STAGES, int A_BYTES, int B_BYTES>
struct Ring {
    uint32_t base;
    __device__ __forceinline__ explicit Ring(uint32_t raw) : base((raw + 1023) & ~1023u) {}
    __device__ __forceinline__ uint32_t a(int s) const { return base + s * A_BYTES; }
    __device__ __forceinline__ uint32_t b(int s) const { return base + STAGES * A_BYTES + s * B_BYTES; }
    __device__ __forceinline__ uint32_t full(int s) const { return base + STAGES * (A_BYTES + B_BYTES) + 8 * s; }
    __device__ __forceinline__ uint32_t empty(int s) const { return full(STAGES + s); }
};


// This thread's 16-byte copies of k tile kt of A (BM rows from block_m) and W (BN rows from block_n) into
// one stage (sA_s, sB_s), in the 128-byte-swizzled layout. Few live registers (the producer may run on
// 40): one running source pointer per operand; rows past M / N and columns past K zero-filled.
template <int BM, int BN>
__device__ __forceinline__ void load_k_tile(uint32_t sA_s, uint32_t sB_s, const bf16* A,
                                            const bf16* W, int M, int N, int K, int block_m,
                                            int block_n, int kt, int chunk, int row0, uint32_t swz) {
    const int gk = kt * BK + chunk * 8;
    const bool k_ok = gk < K;
    const size_t step = (size_t)16 * K;
    const uint32_t a_dst = sA_s + row0 * 128 + swz;
    const int a_rows = M - block_m - row0;   // row row0 + 16 i exists while 16 i < a_rows
    const bf16* a_src = A + (size_t)(block_m + row0) * K + gk;
#pragma unroll 4
    for (int i = 0; i < BM / 16; ++i, a_src += step) {
        const bool ok = k_ok && 16 * i < a_rows;
        cp_async_16(a_dst + i * 16 * 128, ok ? a_src : A, ok);
    }
    const uint32_t b_dst = sB_s + row0 * 128 + swz;
    const int b_rows = N - block_n - row0;
    const bf16* b_src = W + (size_t)(block_n + row0) * K + gk;
#pragma unroll 4
    for (int i = 0; i < BN / 16; ++i, b_src += step) {
        const bool ok = k_ok && 16 * i < b_rows;
        cp_async_16(b_dst + i * 16 * 128, ok ? b_src : W, ok);
    }
}

// One k tile's MMAs for a consumer warpgroup: its MI 64-row slices of A (from a_base) times the stage's W
// (b_base), queued, then waiting until at most this group is in flight (the previous k tile's MMAs are
// done, so that stage may be refilled).
template <int BN, int MI, int ACC>
__device__ __forceinline__ void mma_k_tile(float (&acc)[MI][ACC], uint32_t a_base, uint32_t b_base) {
    const uint64_t db = smem_desc(b_base);
    wgmma_fence();
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk)
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
            wgmma_k16<BN>(acc[mi], smem_desc(a_base + mi * 64 * 128) + 2 * kk, db + 2 * kk);   // +32 B per k16
    wgmma_commit();
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
    wgmma_wait<1>();
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
}

#endif  // SAMSTREAM_SM90A

}  // namespace gemm_sm90
