// 2:4-sparse GEMM on the sparse tensor cores: C[M,N] = A[M,K] * W[N,K]^T (+ bias[N]) (-> GELU)
// (+ residual[M,N]), W pruned to 2:4 along K, bf16 in and out, fp32 accumulation; the same result
// (up to summation order) as gemm.cuh on the dense pruned W, with the same fused epilogue (store_pair).
//
// W comes compressed (io.samstream.gpu.sparse.TwoFourWeights, whose class doc is the layout's reference):
//   Wv: [Np, Kp/2] bf16, the two kept values of every group of four k, in k order;
//   Wm: [Np/16][Kp/32][16] u32, for each 16-row block and k32 step the metadata registers of lanes
//       4g + t (t = 0, 1): bits 0..15 row g, bits 16..31 row g + 8, both for k 16t .. 16t+15, one 4-bit
//       code i0 | i1 << 2 (kept positions, i0 < i1) per group of four;
//   Np = N rounded up to 16, Kp = K rounded up to 64 (padding: zero values, code 0b0100).
//
// mma.sp's sparse operand is its "A" (M side), so the kernel computes the transposed product
// C^T = W * A^T: W's rows are the instruction's m16, the activations' rows its n8, K its k32. Both are
// K-contiguous ("row.col"): the compressed 16 x 16 value block per (m16, k32) has the fragment layout of
// a dense m16n8k16 A operand and the activations that of two k16 B operands, so both load with plain
// ldmatrix.x4. The accumulator fragment is then C^T's, i.e. a thread holds two consecutive *rows* of C
// for one column; one shuffle with the lane of the neighbouring column (lane ^ 4) turns that into pairs
// of adjacent columns, which the dense epilogue stores as bf16x2.
//
// Pipeline: a STAGES-deep cp.async ring of BK = 64 (two k32 steps): weight values (BN x 32), metadata
// (BN/16 x 2 x 64 B) and activations (BM x 64) per stage. Constraints (checked on the host): K % 8 == 0,
// N % 8 == 0, 16-byte aligned pointers. Rows past M and N are zero-filled and never stored.
#pragma once

#include "common.cuh"
#include "gemm.cuh"

namespace gemm_sparse {

// D[16x8] += A[16x32, 2:4 sparse, compressed to 16x16] * B[32x8]; metadata e, sparsity selector 0 (lanes
// with lane % 4 in {0, 1} supply e). ::ordered_metadata: our codes always have i0 < i1, which this
// variant requires and which runs at full rate on sm_90 and later.
__device__ __forceinline__ void mma_sp_bf16_16832(float c[4], const uint32_t a[4], const uint32_t b[4], uint32_t e) {
    asm volatile(
        "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
}

// BN: weight rows (output columns) per CTA, BM: activation rows (output rows) per CTA.
template <int BN, int BM, int WARPS_N, int WARPS_M, int STAGES>
struct Config {
    static constexpr int THREADS = WARPS_N * WARPS_M * 32;
    static constexpr int BK = 64;                       // dense k per stage: two k32 steps
    static constexpr int LDW = BK / 2 + 8;              // compressed value row stride (80 B: ldmatrix conflict-free)
    static constexpr int LDA = BK + 8;                  // activation row stride (144 B)
    static constexpr int WN = BN / WARPS_N;             // warp tile: weight rows
    static constexpr int WM = BM / WARPS_M;             // warp tile: activation rows
    static constexpr int MT = WN / 16;                  // m16 tiles (of W) per warp
    static constexpr int NT = WM / 8;                   // n8 tiles (of A) per warp
    static constexpr int META_WORDS = BN / 16 * 2 * 16; // u32 metadata per stage
    static constexpr int SMEM_BYTES = STAGES * ((BN * LDW + BM * LDA) * (int)sizeof(bf16) + META_WORDS * 4);
    static_assert(WN % 16 == 0 && WM % 8 == 0, "warp tile must be a multiple of 16 x 8");
};

template <int BN, int BM, int WARPS_N, int WARPS_M, int STAGES>
__device__ __forceinline__ void gemm_sparse_bf16(const bf16* __restrict__ A, const bf16* __restrict__ Wv,
                                                 const uint32_t* __restrict__ Wm, const bf16* __restrict__ bias,
                                                 const bf16* residual, bf16* C, int M, int N, int K, int epilogue) {
    using Cfg = Config<BN, BM, WARPS_N, WARPS_M, STAGES>;
    constexpr int MT = Cfg::MT, NT = Cfg::NT, LDW = Cfg::LDW, LDA = Cfg::LDA, BK = Cfg::BK;

    extern __shared__ __align__(128) unsigned char smem[];
    bf16* sW = reinterpret_cast<bf16*>(smem);                      // [STAGES][BN][LDW]
    bf16* sA = sW + STAGES * BN * LDW;                             // [STAGES][BM][LDA]
    uint32_t* sE = reinterpret_cast<uint32_t*>(sA + STAGES * BM * LDA);  // [STAGES][BN/16][2][16]

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_n = warp % WARPS_N, warp_m = warp / WARPS_N;
    // x walks N (weights), as in gemm.cuh: neighbouring CTAs share their activation rows in L2.
    const int block_n = blockIdx.x * BN, block_m = blockIdx.y * BM;
    const int kp = (K + 63) & ~63, half_kp = kp / 2, steps = kp / 32, np = (N + 15) & ~15;

    auto load_tile = [&](int stage, int kt) {
        bf16* w_dst = sW + stage * BN * LDW;
#pragma unroll
        for (int c = tid; c < BN * 4; c += Cfg::THREADS) {   // 4 chunks of 8 values per row
            int r = c >> 2, kc = (c & 3) * 8, gr = block_n + r;
            bool ok = gr < np;
            cp_async_16(smem_addr(w_dst + r * LDW + kc), ok ? Wv + (size_t)gr * half_kp + kt * (BK / 2) + kc : Wv, ok);
        }
        uint32_t* e_dst = sE + stage * Cfg::META_WORDS;
#pragma unroll
        for (int c = tid; c < BN / 16 * 8; c += Cfg::THREADS) {  // 8 chunks (32 words) per 16-row block
            int blk = c >> 3, off = (c & 7) * 4, gb = block_n / 16 + blk;
            bool ok = gb < np / 16;
            cp_async_16(smem_addr(e_dst + blk * 32 + off), ok ? Wm + ((size_t)gb * steps + kt * 2) * 16 + off : Wm, ok);
        }
        bf16* a_dst = sA + stage * BM * LDA;
#pragma unroll
        for (int c = tid; c < BM * 8; c += Cfg::THREADS) {   // 8 chunks of 8 k per row
            int r = c >> 3, kc = (c & 7) * 8, gr = block_m + r, gk = kt * BK + kc;
            bool ok = gr < M && gk < K;
            cp_async_16(smem_addr(a_dst + r * LDA + kc), ok ? A + (size_t)gr * K + gk : A, ok);
        }
    };

    // ldmatrix lane offsets. W (mma A): matrices (rows 0-7, c 0-7) (rows 8-15, c 0-7) (rows 0-7, c 8-15)
    // (rows 8-15, c 8-15) of the compressed block = a0..a3. Activations (mma B): one n8 tile, matrices
    // k 0-7, 8-15, 16-23, 24-31 = b0..b3.
    const int w_row = warp_n * Cfg::WN + (lane & 15), w_col = (lane >> 4) * 8;
    const int a_row = warp_m * Cfg::WM + (lane & 7), a_col = (lane >> 3) * 8;
    const int g = lane >> 2, t = lane & 1;   // metadata word 2g + t (lanes t = 2, 3 read a copy; unused)

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    const int k_tiles = kp / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles) load_tile(s, s);
        cp_async_commit();
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();   // tile kt landed for everyone; everyone is done with tile kt - 1's slot
        {
            const int next = kt + STAGES - 1;
            if (next < k_tiles) load_tile(next % STAGES, next);
            cp_async_commit();
        }
        const int stage = kt % STAGES;
        const bf16* w_s = sW + stage * BN * LDW;
        const bf16* a_s = sA + stage * BM * LDA;
        const uint32_t* e_s = sE + stage * Cfg::META_WORDS;
#pragma unroll
        for (int ks = 0; ks < 2; ++ks) {
            uint32_t af[MT][4], bfr[NT][4], ef[MT];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                ldmatrix_x4(af[mt][0], af[mt][1], af[mt][2], af[mt][3],
                            smem_addr(w_s + (w_row + mt * 16) * LDW + ks * 16 + w_col));
                uint32_t e = e_s[((warp_n * Cfg::WN / 16 + mt) * 2 + ks) * 16 + 2 * g + t];
                ef[mt] = e != 0u ? e : 0x44444444u;   // zero-filled blocks past N: a valid code, zero values
            }
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
                ldmatrix_x4(bfr[nt][0], bfr[nt][1], bfr[nt][2], bfr[nt][3],
                            smem_addr(a_s + (a_row + nt * 8) * LDA + ks * 32 + a_col));
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) mma_sp_bf16_16832(acc[mt][nt], af[mt], bfr[nt], ef[mt]);
        }
    }
    cp_async_wait<0>();

    // acc[mt][nt] = C^T fragment: {(n g, m 2q), (n g, m 2q+1), (n g+8, m 2q), (n g+8, m 2q+1)}, q = lane % 4.
    // Lanes g and g ^ 1 swap one value each: even g keeps row m = 2q with columns (g, g+1), odd g row
    // 2q + 1 with columns (g-1, g).
    const bool has_bias = (epilogue & gemm::BIAS) != 0, has_gelu = (epilogue & gemm::GELU) != 0,
               has_res = (epilogue & gemm::RESIDUAL) != 0;
    const bool odd = (g & 1) != 0;
    const int q = lane & 3;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int col = block_n + warp_n * Cfg::WN + mt * 16 + h * 8 + (g & ~1);
            const float2 b = gemm::load_bias_pair(bias, col < N ? col : 0, has_bias && col < N);
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                const float s0 = acc[mt][nt][2 * h], s1 = acc[mt][nt][2 * h + 1];
                const float recv = __shfl_xor_sync(0xffffffffu, odd ? s0 : s1, 4);
                const int row = block_m + warp_m * Cfg::WM + nt * 8 + 2 * q + (odd ? 1 : 0);
                if (row >= M || col >= N) continue;   // N % 8 == 0: col + 1 < N too
                gemm::store_pair(C, residual, (size_t)row * N + col, (odd ? recv : s0) + b.x,
                                 (odd ? s1 : recv) + b.y, has_gelu, has_res);
            }
        }
    }
}

}  // namespace gemm_sparse
