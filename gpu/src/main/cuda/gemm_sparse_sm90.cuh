// Hopper (sm_90a) 2:4-sparse GEMM: the function of gemm_sparse.cuh (C = A . W^T (+bias) (GELU) (+residual),
// W pruned to 2:4 along K and given as TwoFourWeights' values + metadata) with warpgroup MMA
// (wgmma.mma_async.sp) and the warp-specialised pipeline of gemm_sm90.cuh (producer warpgroup, cp.async into
// 128-byte-swizzled tiles, full/empty mbarriers per stage, two consumer warpgroups).
//
// W is the sparse operand, so, as in gemm_sparse.cuh, the kernel computes C^T = W . A^T: each consumer
// warpgroup owns 64 weight rows (output columns), the instruction's N is 128 activation rows (output rows).
// One stage holds 128 dense k (four k32 steps): the compressed W tile (128 rows x 64 values = one 128-byte
// swizzle atom per row, +32 B per k32 step, as gemm_sm90's +32 B per k16), the activation tile as two
// sub-tiles of 64 k (one atom per row each; a k32 step is half an atom, +64 B), and the metadata words of the
// 8 16-row blocks x 4 steps (2 KB, unswizzled; consumers read their warp's register with one 4-byte load:
// warp w of a warpgroup gives the metadata of its 16 rows, in the layout of mma.sp m16n8k32).
// Accumulators are C^T's: the epilogue swaps one value with lane ^ 4, as gemm_sparse.cuh does, and stores
// column pairs through gemm::store_pair.
//
// Compiled for sm_90a only (a trapping body elsewhere); launched only on compute capability 9.0, as the fallback of
// the TMA-fed 2:4 GEMM where tensor maps cannot be made.
#pragma once

#include "common.cuh"
#include "gemm.cuh"
#include "gemm_sm90.cuh"

namespace gemm_sparse_sm90 {

constexpr int BKD = 128;            // dense k per stage
constexpr int BW = 128;             // weight rows per CTA (two consumer warpgroups of 64)
constexpr int BA = 128;             // activation rows per CTA (the wgmma N)

template <int STAGES>
struct Config {
    static constexpr int THREADS = 384;
    static constexpr int W_BYTES = BW * 128;              // compressed values: 64 per row = 128 B
    static constexpr int A_BYTES = 2 * BA * 128;          // activations: two 64-k sub-tiles
    static constexpr int E_BYTES = BW / 16 * 4 * 64;      // metadata: 8 blocks x 4 k32 steps x 16 words
    static constexpr int STAGE_BYTES = W_BYTES + A_BYTES + E_BYTES;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 2 * STAGES * 8 + 1024;
    static constexpr int LAG = STAGES - 2;
    static_assert(STAGES >= 3, "the pipeline needs at least 3 stages");
    static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 CTA can have");
};

#ifdef SAMSTREAM_SM90A
// D[64 x 128] += A[64 x 32, 2:4, compressed to 64 x 16] . B[128 x 32]^T; A and B K-major in 128-byte-swizzled
// shared memory, metadata e (this warp's 16 rows, the mma.sp m16n8k32 register layout), sparsity selector 0.
__device__ __forceinline__ void wgmma_sp_m64n128k32(float (&d)[64], uint64_t desc_a, uint64_t desc_b, uint32_t e) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %67, 0;\n"
        "wgmma.mma_async.sp.sync.aligned.m64n128k32.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, %66, 0, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(desc_a), "l"(desc_b), "r"(e), "r"(1));
}

#endif  // SAMSTREAM_SM90A

template <int STAGES>
__device__ __forceinline__ void gemm_sparse_bf16_sm90(const bf16* __restrict__ A, const bf16* __restrict__ Wv,
                                                      const uint32_t* __restrict__ Wm,
                                                      const bf16* __restrict__ bias, const bf16* residual,
                                                      bf16* C, int M, int N, int K, int epilogue) {
#ifdef SAMSTREAM_SM90A
    using namespace gemm_sm90;
    using Cfg = Config<STAGES>;
    constexpr int LAG = Cfg::LAG;

    extern __shared__ unsigned char smem_raw[];
    const uint32_t raw = smem_addr(smem_raw);
    const uint32_t base = (raw + 1023) & ~1023u;
    auto stage_w = [&](int s) { return base + s * Cfg::STAGE_BYTES; };
    auto stage_a = [&](int s) { return base + s * Cfg::STAGE_BYTES + Cfg::W_BYTES; };
    auto stage_e = [&](int s) { return base + s * Cfg::STAGE_BYTES + Cfg::W_BYTES + Cfg::A_BYTES; };
    const uint32_t bars = base + STAGES * Cfg::STAGE_BYTES;
    auto full = [&](int s) { return bars + 8 * s; };
    auto empty = [&](int s) { return bars + 8 * (STAGES + s); };

    const int kp = (K + 63) & ~63, half_kp = kp / 2, steps = kp / 32, np = (N + 15) & ~15;
    const int tid = threadIdx.x, wg = tid / 128;
    // An even count: the consumers take k tiles in pairs (below); a padding tile past K loads zeros (the copies'
    // bounds checks) and multiplies them by the neutral metadata code.
    const int k_tiles = ((kp + BKD - 1) / BKD + 1) & ~1;
    const int w_tiles = (N + BW - 1) / BW;
    const int tiles = ((M + BA - 1) / BA) * w_tiles;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), 128);
            mbar_init(empty(s), 8);
        }
    }
    __syncthreads();

    if (wg == 0) {
        // ------------------------------------------------------------------ producer
        const int chunk = tid & 7, row0 = tid >> 3;
        const uint32_t swz = (uint32_t)((chunk ^ (row0 & 7)) * 16);
        int g = 0;
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
            const int block_a = (t / w_tiles) * BA, block_w = (t % w_tiles) * BW;
            for (int kt = 0; kt < k_tiles; ++kt, ++g) {
                const int s = g % STAGES;
                if (g >= STAGES) mbar_wait(empty(s), ((g / STAGES) + 1) & 1);
                // compressed values: 64 per row of this stage, chunk c = values 8c .. 8c+7
                const int vk = kt * (BKD / 2) + chunk * 8;
                const bool v_ok = vk < half_kp;
#pragma unroll 4
                for (int i = 0; i < BW / 16; ++i) {
                    const int r = row0 + 16 * i, gr = block_w + r;
                    const bool ok = v_ok && gr < np;
                    cp_async_16(stage_w(s) + r * 128 + swz, ok ? Wv + (size_t)gr * half_kp + vk : Wv, ok);
                }
                // activations: sub-tile h holds k 64h .. 64h+63 of the stage
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int gk = kt * BKD + h * 64 + chunk * 8;
                    const bool k_ok = gk < K;
#pragma unroll 4
                    for (int i = 0; i < BA / 16; ++i) {
                        const int r = row0 + 16 * i, gr = block_a + r;
                        const bool ok = k_ok && gr < M;
                        cp_async_16(stage_a(s) + h * BA * 128 + r * 128 + swz, ok ? A + (size_t)gr * K + gk : A, ok);
                    }
                }
                // metadata: block b (16 rows), steps 4kt .. 4kt+3: 4 x 64 B contiguous in Wm; one chunk per thread
                {
                    const int b = tid >> 4, off = (tid & 15) * 4, gb = block_w / 16 + b;
                    const int step0 = kt * 4 + off / 16;
                    const bool ok = gb < np / 16 && step0 < steps;
                    cp_async_16(stage_e(s) + b * 256 + off * 4,
                                ok ? Wm + ((size_t)gb * steps + kt * 4) * 16 + off : Wm, ok);
                }
                cp_async_commit();
                v1_complete_lagging_stage<LAG, STAGES>(g, full(0));
            }
        }
        v1_complete_remaining_stages<LAG, STAGES>(g, full(0));
        return;
    }

    // ---------------------------------------------------------------------- consumers
    const int cw = wg - 1, warp = (tid >> 5) & 3, lane = tid & 31;
    const int gq = lane >> 2, q = lane & 3;
    const bool has_bias = (epilogue & gemm::BIAS) != 0, has_gelu = (epilogue & gemm::GELU) != 0,
               has_res = (epilogue & gemm::RESIDUAL) != 0;
    const int e_word = ((cw * 4 + warp) * 4) * 16 + 2 * gq + (lane & 1);   // + 16 * step
    float acc[64];
    // wgmma.sp reads its metadata register when the MMA runs, not when it is issued, and ptxas does not keep that
    // register from being reused before the retiring wait_group (as it does for the other operands). With one set
    // loaded each k tile, the next tile's load landed in the registers of the group still in flight: wrong outputs on
    // the larger grids, a different count each run, none with every group retired before each load
    // (SparseGemmSm90GpuTest; bench/results/code-comment-figures.md). So the k tiles alternate between two register sets, and each
    // set is kept in use (pin) until the wait that retires its tile: the two live ranges overlap, so they cannot
    // share registers.
    uint32_t e_even[4] = {0u, 0u, 0u, 0u}, e_odd[4] = {0u, 0u, 0u, 0u};
    auto pin = [&](const uint32_t(&e)[4]) { keep_in_registers(e, M, base); };   // M > 0: checked on the host
    int g = 0;
    // One k tile (stage g) with metadata set `e`; `retired`, the other set, belongs to the tile whose MMAs the
    // wait below retires.
    auto k_tile = [&](int kt, uint32_t(&e)[4], uint32_t(&retired)[4]) {
        const int s = g % STAGES;
        mbar_wait(full(s), (g / STAGES) & 1);
        const uint64_t dw = smem_desc(stage_w(s) + cw * 64 * 128);
        const uint64_t da0 = smem_desc(stage_a(s)), da1 = smem_desc(stage_a(s) + BA * 128);
        const uint32_t* es = reinterpret_cast<const uint32_t*>(smem_raw + (stage_e(s) - raw));
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
            const uint32_t v = es[e_word + 16 * kk];
            e[kk] = v != 0u ? v : 0x44444444u;   // zero-filled past N or K: a valid code on zero values
        }
        wgmma_fence();
        fence_acc(acc);
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
            wgmma_sp_m64n128k32(acc, dw + 2 * kk, (kk < 2 ? da0 : da1) + 4 * (kk & 1), e[kk]);
        wgmma_commit();
        fence_acc(acc);
        wgmma_wait<1>();
        fence_acc(acc);
        pin(retired);   // the previous k tile's MMAs are done: its metadata registers may be reused from here
        if (kt > 0 && lane == 0) mbar_arrive(empty((g - 1) % STAGES));
        ++g;
    };
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int block_a = (t / w_tiles) * BA, block_w = (t % w_tiles) * BW;
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] = 0.f;

        // In pairs, with no branch between them: ptxas serialises every wgmma of the kernel (warning C7513) when a
        // conditional k tile joins the flow while a group is in flight.
        for (int kt = 0; kt < k_tiles; kt += 2) {
            k_tile(kt, e_even, e_odd);
            k_tile(kt + 1, e_odd, e_even);
        }
        wgmma_wait<0>();
        fence_acc(acc);
        pin(e_even);
        pin(e_odd);
        if (lane == 0) mbar_arrive(empty((g - 1) % STAGES));

        // acc[4j + 2h + 0..1] = C^T[weight row 16 warp + gq + 8h][activation rows 8j + 2q, +1]; swap with lane ^ 4.
        const bool odd = (gq & 1) != 0;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int col = block_w + cw * 64 + warp * 16 + h * 8 + (gq & ~1);
            const float2 b = gemm::load_bias_pair(bias, col < N ? col : 0, has_bias && col < N);
#pragma unroll
            for (int j = 0; j < 16; ++j) {
                const float s0 = acc[4 * j + 2 * h], s1 = acc[4 * j + 2 * h + 1];
                const float recv = __shfl_xor_sync(0xffffffffu, odd ? s0 : s1, 4);
                const int row = block_a + j * 8 + 2 * q + (odd ? 1 : 0);
                if (row >= M || col >= N) continue;
                gemm::store_pair(C, residual, (size_t)row * N + col, (odd ? recv : s0) + b.x, (odd ? s1 : recv) + b.y,
                                 has_gelu, has_res);
            }
        }
    }
#else
    __trap();
#endif
}

}  // namespace gemm_sparse_sm90
