// The FP8 (e4m3) Hopper GEMM's mainloop piece (sm_90a): one k tile of a consumer warpgroup's wgmma on e4m3 operands.
// The schedule is gemm_sm90_tma.cuh's (E4M3 = true): the ring, the TMA copies and the barriers are the bf16 GEMM's,
// because a k tile of 128 e4m3 is 128 bytes per row, the bytes of 64 bf16 (one 128-byte swizzle atom). Only the
// instruction and the k extent of a tile differ: four m64nNk32 steps of 32 bytes instead of four k16 steps of 32
// bytes, so the descriptor advances by 32 B (2 in its 16-byte units) per step exactly as in mma_k_tile.
#pragma once

#include "common.cuh"
#include "gemm_sm90_mainloop.cuh"
#include "gemm_sm90_ptx.cuh"

namespace gemm_sm90 {

constexpr int BK_E4M3 = 2 * BK;   // e4m3 elements per k tile: 128 bytes a row, as BK bf16

#ifdef SAMSTREAM_SM90A

// One k tile (128 e4m3 of k) for a consumer warpgroup: its MI 64-row slices of A (from a_base) times the stage's W
// (b_base), queued, then waiting until at most this group is in flight (the protocol of mma_k_tile).
template <int BN, int MI, int ACC>
__device__ __forceinline__ void mma_k_tile_e4m3(float (&acc)[MI][ACC], uint32_t a_base, uint32_t b_base) {
    const uint64_t db = smem_desc(b_base);
    wgmma_fence();
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
#pragma unroll
    for (int kk = 0; kk < BK_E4M3 / 32; ++kk)
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
            wgmma_k32_e4m3<BN>(acc[mi], smem_desc(a_base + mi * 64 * 128) + 2 * kk, db + 2 * kk);   // +32 B per k32
    wgmma_commit();
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
    wgmma_wait<1>();
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
}

#endif  // SAMSTREAM_SM90A

}  // namespace gemm_sm90
