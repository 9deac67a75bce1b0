// Block-scaled FP8 (e4m3) pieces of the Hopper TMA GEMM (sm_90a), DeepSeek-V3 / DeepGEMM style, for mlp.lin1 -> lin2
// without a separate quantize pass (issue #32):
//   - stage_and_store_tile_e4m3: lin1's epilogue writes e4m3 with one fp32 scale per (row, 128-column block),
//     scale = max(amax over the block, 1e-12) / 448, q = e4m3(v * (448 / amax)) (fp8_quant.cuh's formula per block
//     instead of per row). A row's 128 columns of one consumer warpgroup's tile live in the 4 lanes of a quad
//     (acc[4j + 2h + e]: column 8j + 2 (lane % 4) + e), so the block's amax is 32 values per lane and two shuffles.
//   - mma_k_tile_e4m3_blockscaled: lin2 reads that A (a_scale [M, K / 128]): one k tile (128 e4m3 of k) is exactly
//     one scale block, so each k tile is accumulated into a zeroed temporary fragment, waited for, and added to the
//     fp32 accumulators times the row's block scale. This also promotes the partial sums to fp32 registers every
//     128 of k (the e4m3 wgmma accumulator keeps fewer bits than fp32: bench/results/2026-12-04-h200-fp8.md).
//   - scale_columns: the weight's per-output-channel scale, applied after the mainloop as before.
#pragma once

#include <cuda.h>        // CUtensorMap
#include <cuda_fp8.h>

#include "common.cuh"
#include "gemm_epilogue.cuh"
#include "gemm_fp8_sm90_mainloop.cuh"
#include "gemm_sm90_ptx.cuh"
#include "gemm_sm90_tma_ptx.cuh"

namespace gemm_sm90 {

constexpr int SCALE_BLOCK = 128;   // columns of lin1's output (= k of lin2) per activation scale

#ifdef SAMSTREAM_SM90A

// One k tile (128 e4m3 of k: block kt of a_scale's columns) for a consumer warpgroup, block-scaled: for each of its
// MI 64-row slices, the 4 k32 MMAs into tmp (zeroed: wgmma here always accumulates), waited for, then
// acc[mi] += tmp * a_scale[row, kt] (rows of the m64nN layout: r0 + 16 warp + lane / 4 and 8 further; the caller passes
// s[mi][0..1], the scales of those rows, 0 past M). Waits for all its MMAs, so the stage may be released at once.
template <int BN, int MI, int ACC>
__device__ __forceinline__ void mma_k_tile_e4m3_blockscaled(float (&acc)[MI][ACC], float (&tmp)[ACC], uint32_t a_base,
                                                            uint32_t b_base, const float (&s)[MI][2]) {
    static_assert(ACC == BN / 2, "one m64nBN fragment");
    const uint64_t db = smem_desc(b_base);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
        for (int i = 0; i < ACC; ++i) tmp[i] = 0.f;
        wgmma_fence();
        fence_acc(tmp);
#pragma unroll
        for (int kk = 0; kk < BK_E4M3 / 32; ++kk)
            wgmma_k32_e4m3<BN>(tmp, smem_desc(a_base + mi * 64 * 128) + 2 * kk, db + 2 * kk);   // +32 B per k32
        wgmma_commit();
        fence_acc(tmp);
        wgmma_wait<0>();
        fence_acc(tmp);
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            acc[mi][4 * j + 0] = fmaf(tmp[4 * j + 0], s[mi][0], acc[mi][4 * j + 0]);
            acc[mi][4 * j + 1] = fmaf(tmp[4 * j + 1], s[mi][0], acc[mi][4 * j + 1]);
            acc[mi][4 * j + 2] = fmaf(tmp[4 * j + 2], s[mi][1], acc[mi][4 * j + 2]);
            acc[mi][4 * j + 3] = fmaf(tmp[4 * j + 3], s[mi][1], acc[mi][4 * j + 3]);
        }
    }
}

// The block scales of this lane's two rows of each slice for k tile kt (a_scale [M, kb] row-major), 0 past M.
template <int MI>
__device__ __forceinline__ void load_block_scales(float (&s)[MI][2], const float* __restrict__ a_scale, int M, int kb,
                                                  int kt, int row0, int slice_rows, int warp, int lane) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = row0 + mi * slice_rows + warp * 16 + (lane >> 2) + 8 * h;
            s[mi][h] = r < M ? __ldg(a_scale + (size_t)r * kb + kt) : 0.f;
        }
}

// One consumer warpgroup's 64 x BN accumulators times the weight's per-output-channel scales (columns past N: 0).
template <int BN>
__device__ __forceinline__ void scale_columns(float (&acc)[BN / 2], const float* __restrict__ w_scale, int N,
                                              int block_n, int lane) {
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        const int col = block_n + j * 8 + (lane & 3) * 2;   // even, N % 8 == 0
        const float2 w = col < N ? __ldg(reinterpret_cast<const float2*>(w_scale + col)) : make_float2(0.f, 0.f);
        acc[4 * j + 0] *= w.x;
        acc[4 * j + 1] *= w.y;
        acc[4 * j + 2] *= w.x;
        acc[4 * j + 3] *= w.y;
    }
}

__device__ __forceinline__ void st_shared_u16(uint32_t addr, uint16_t v) {
    asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(addr), "h"(v) : "memory");
}

#endif  // SAMSTREAM_SM90A

}  // namespace gemm_sm90

namespace gemm_sm90_tma {

#ifdef SAMSTREAM_SM90A

// The e4m3 epilogue of one consumer warpgroup's 64 x BN tile (rows row0 ..., columns block_n ..., N % 128 == 0):
// v = (acc (+ bias)) (-> GELU), then per row and 128-column block h: amax, the scale to out_scale[row, block_n / 128 +
// h] (out_scale [M, N / 128]) and the e4m3 bytes staged in `out` (one 64 x 128-byte box, 128-byte swizzled as map_c
// reads it: row r's 16-byte chunk c at r * 128 + (c ^ r % 8) * 16) and stored by one TMA store (map_c: u8 [M, N], box
// 128 x 64). Blocks past N are skipped (N % 128 == 0); rows past M are computed but neither stored nor given a scale.
template <int BN>
__device__ __forceinline__ void stage_and_store_tile_e4m3(float (&acc)[BN / 2], const bf16* __restrict__ bias,
                                                          float* __restrict__ out_scale, const CUtensorMap& map_c,
                                                          uint32_t out, int M, int N, int row0, int block_n,
                                                          int barrier_id, int warp, int lane, bool has_bias,
                                                          bool has_gelu) {
    const bool issuer = warp == 0 && lane == 0;
    const int nb = N / gemm_sm90::SCALE_BLOCK;
#pragma unroll
    for (int h = 0; h < BN / 128; ++h) {
        // a 256-wide tile's second block past N (N % 256 == 128): nothing to write (uniform over the warpgroup, so
        // the warpgroup barriers below stay matched)
        if (block_n + h * 128 >= N) continue;
        float amax[2] = {0.f, 0.f};
#pragma unroll
        for (int jl = 0; jl < 16; ++jl) {
            const int j = 16 * h + jl;
            const float2 b = gemm::load_bias_pair(bias, block_n + j * 8 + (lane & 3) * 2, has_bias);
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                float v0 = acc[4 * j + 2 * half] + b.x, v1 = acc[4 * j + 2 * half + 1] + b.y;
                if (has_gelu) {
                    v0 = gemm::gelu_erf(v0);
                    v1 = gemm::gelu_erf(v1);
                }
                acc[4 * j + 2 * half] = v0;
                acc[4 * j + 2 * half + 1] = v1;
                amax[half] = fmaxf(amax[half], fmaxf(fabsf(v0), fabsf(v1)));
            }
        }
        float inv[2];
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            // the row's 128 columns are in the 4 lanes of the quad (lane % 4)
            float a = fmaxf(amax[half], __shfl_xor_sync(0xffffffffu, amax[half], 1));
            a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, 2));
            a = fmaxf(a, 1e-12f);   // fp8_quant::MIN_AMAX
            inv[half] = __fdiv_rn(448.f, a);
            const int row = row0 + warp * 16 + (lane >> 2) + half * 8;
            if ((lane & 3) == 0 && row < M) out_scale[(size_t)row * nb + block_n / 128 + h] = __fdiv_rn(a, 448.f);
        }
        if (issuer) bulk_wait_group_read<0>();   // the previous store out of this buffer has been read
        warpgroup_sync(barrier_id);
#pragma unroll
        for (int jl = 0; jl < 16; ++jl) {
            const int j = 16 * h + jl;
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int r = warp * 16 + (lane >> 2) + half * 8;   // row within the warpgroup's 64
                const __nv_fp8x2_storage_t q = __nv_cvt_float2_to_fp8x2(
                    make_float2(__fmul_rn(acc[4 * j + 2 * half], inv[half]),
                                __fmul_rn(acc[4 * j + 2 * half + 1], inv[half])),
                    __NV_SATFINITE, __NV_E4M3);
                // byte column jl * 8 + 2 (lane % 4): 16-byte chunk jl / 2, at (jl % 2) * 8 + 2 (lane % 4) inside it
                gemm_sm90::st_shared_u16(out + r * 128 + (((jl >> 1) ^ (r & 7)) << 4) + (jl & 1) * 8 + (lane & 3) * 2,
                                         (uint16_t)q);
            }
        }
        gemm_sm90::fence_proxy_async();   // this thread's staged bytes, visible to the TMA unit
        warpgroup_sync(barrier_id);
        if (issuer) {
            if (row0 < M) tma_store_2d(map_c, out, block_n + h * 128, row0);
            bulk_commit_group();
        }
    }
}

#endif  // SAMSTREAM_SM90A

}  // namespace gemm_sm90_tma
