// Hopper (sm_90a) GEMM: C[M,N] = A[M,K] * W[N,K]^T (+ bias[N]) (-> GELU) (+ residual[M,N]), bf16 in and
// out, fp32 accumulation in the registers of warpgroup MMA (wgmma.mma_async). Same function, constraints
// and epilogue as gemm.cuh (the mma.sync kernel, which sm_80-89 keep), so the host can swap them.
//
// Why. The mma.sync kernel tops out near 300 TFLOP/s on the H200 (ldmatrix traffic, 2 warps per scheduler,
// L2 -> shared at 128x128 tiles). wgmma reads both operands straight from shared memory and runs
// asynchronously, so one CTA of 384 threads per SM keeps the tensor cores busier: measured 1.5-1.7x the
// mma.sync kernel on the encoder's shapes (bench/results/2026-11-30-h200-wgmma.md). The 128x256 tile's
// accumulators (64x256 per consumer warpgroup, 128 fp32 registers per thread) fit in the 168 registers a
// 384-thread CTA gets (ptxas: 160, no spills). The 256x192 tile (2 x 96 x 2 = 192 accumulators per thread)
// moves registers from the producer (setmaxnreg 40 / 232, REBALANCE).
//
// No TMA: JCuda 12.6 cannot build tensor maps (no cuTensorMapEncodeTiled), so a producer warpgroup
// copies the tiles with 16-byte cp.async into the 128-byte-swizzled layout that wgmma's shared-memory
// descriptors describe. Warp-specialised pipeline, STAGES slots, two mbarriers per slot:
//   producer (warpgroup 0, 128 threads): wait "empty[s]" -> cp.async tile kt into slot s -> commit; then
//     wait for its own tile kt-LAG (cp.async.wait_group LAG), fence.proxy.async (the copies were made
//     through the generic proxy, wgmma reads through the async proxy), arrive on "full[(kt-LAG)%S]".
//   consumers (warpgroups 1 and 2, 64 rows each): wait "full[s]" -> 4 wgmma k16 steps -> commit ->
//     wgmma.wait_group 1 (the previous tile's MMAs are done) -> arrive on "empty" of that tile's slot.
// LAG = STAGES - 2 keeps two tiles of copies in flight per producer thread while the consumers have
// one tile of MMAs in flight and one queued.
//
// Shared-memory layout of one operand tile (R rows x 64 bf16 = 128 B per row, 1024-byte aligned): row r
// at r * 128, its 16-byte chunk c at chunk (c ^ (r % 8)) (the 128B swizzle); 8-row groups are 1024 B
// apart (the descriptor's stride byte offset). A k16 step inside the 64-wide tile adds 32 B to the
// descriptor's start address (the swizzle is applied by the hardware on the absolute address bits).
//
// Accumulator layout of m64nNk16 (per warp w of the warpgroup, lane l): d[4j + 0..1] = rows 16w + l/4,
// columns 8j + 2(l%4) + 0..1; d[4j + 2..3] = the same 8 rows further down. The epilogue writes bf16x2
// pairs straight from there, exactly as gemm.cuh does.
//
// The kernel body exists only for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL); the other targets of the fatbin
// get a body that traps, and CudaKernels launches these kernels only on compute capability 9.0.
#pragma once

#include "common.cuh"
#include "gemm.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SAMSTREAM_SM90A 1
#endif

namespace gemm_sm90 {

constexpr int BK = 64;   // one 128-byte swizzle atom of bf16 per row

template <int BM, int BN, int STAGES>
struct Config {
    static constexpr int THREADS = 384;                 // producer + 2 consumers
    static constexpr int MI = BM / 128;                 // m64 blocks per consumer warpgroup (BM / 2 rows each)
    static constexpr int A_BYTES = BM * BK * 2;         // one stage of A
    static constexpr int B_BYTES = BN * BK * 2;         // one stage of W
    static constexpr int TILE_BYTES = STAGES * (A_BYTES + B_BYTES);
    // + barriers (2 per stage) + slack to align the dynamic shared memory up to 1024 B
    static constexpr int SMEM_BYTES = TILE_BYTES + 2 * STAGES * 8 + 1024;
    static constexpr int LAG = STAGES - 2;
    static constexpr int ACC = BN / 2;                  // fp32 accumulators per consumer thread and m64 block
    // More than 168 accumulator-heavy registers per consumer thread: move registers from the producer.
    static constexpr bool REBALANCE = MI * ACC > 128;
    // Column tiles whose residual store_tile reads ahead: as many as the consumer's registers leave (ptxas: no
    // spills at 4 on every tile; 8 spills at 128x256).
    static constexpr int EPILOGUE_GROUP = 4;
    static_assert(STAGES >= 3, "the pipeline needs at least 3 stages");
    static_assert(BM == 128 || BM == 256, "two consumer warpgroups of 64 or 128 rows");
    static_assert(BN == 128 || BN == 192 || BN == 256, "wgmma tile widths 128, 192, 256");
    static_assert(SMEM_BYTES <= 232448, "more shared memory than an sm_90 CTA can have");
};

#ifdef SAMSTREAM_SM90A

// ---- mbarrier -------------------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Blocks until the phase with the given parity has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    do {
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}

__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---- wgmma ------------------------------------------------------------------------------------------------
// Shared-memory matrix descriptor, K-major operand with the 128-byte swizzle: start address >> 4 (bits
// 0-13), leading byte offset (unused with this swizzle: 1), stride byte offset 1024 >> 4 (bits 32-45),
// base offset 0 (tiles are 1024-aligned), layout type 1 = 128B swizzle (bits 62-63).
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr) {
    uint64_t d = 0;
    d |= (uint64_t)((addr & 0x3FFFF) >> 4);
    d |= (uint64_t)1 << 16;
    d |= (uint64_t)(1024 >> 4) << 32;
    d |= (uint64_t)1 << 62;
    return d;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keeps four registers in use up to this point, for operands that an asynchronous wgmma reads from registers (A
// fragments, sparsity metadata): their registers must not be reused before the wait_group that retires the MMA,
// and ptxas does not always see that (gemm_sparse_sm90.cuh). An empty asm would leave the PTX showing them dead from
// the wgmma on, so this is an instruction that reads them: a shared-memory store that never runs (`positive` is
// > 0 on every launch, which the host checks, and no compiler can know it). `smem`: any shared address.
__device__ __forceinline__ void keep_in_registers(const uint32_t (&v)[4], int positive, uint32_t smem) {
    asm volatile("{\n.reg .pred p;\nsetp.lt.s32 p, %4, 0;\n@p st.shared.v4.u32 [%5], {%0, %1, %2, %3};\n}\n" ::"r"(v[0]),
                 "r"(v[1]), "r"(v[2]), "r"(v[3]), "r"(positive), "r"(smem)
                 : "memory");
}

// Keeps the compiler from moving accumulator accesses across the asynchronous MMAs.
template <int R>
__device__ __forceinline__ void fence_acc(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// D[64 x 128] += A[64 x 16] . B[128 x 16]^T, both K-major in 128-byte-swizzled shared memory.
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
        "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(desc_a), "l"(desc_b), "r"(1));
}

// D[64 x 192] += A[64 x 16] . B[192 x 16]^T, both K-major in 128-byte-swizzled shared memory.
__device__ __forceinline__ void wgmma_m64n192k16(float (&d)[96], uint64_t desc_a, uint64_t desc_b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 "
        "{"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
        "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
        "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95"
        "}, %96, %97, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
        : "l"(desc_a), "l"(desc_b), "r"(1));
}

// D[64 x 256] += A[64 x 16] . B[256 x 16]^T, both K-major in 128-byte-swizzled shared memory.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
        "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
        "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
        "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
        "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
        "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(1));
}

template <int BN>
__device__ __forceinline__ void wgmma_k16(float (&d)[BN / 2], uint64_t desc_a, uint64_t desc_b) {
    if constexpr (BN == 256) {
        wgmma_m64n256k16(d, desc_a, desc_b);
    } else if constexpr (BN == 192) {
        wgmma_m64n192k16(d, desc_a, desc_b);
    } else {
        wgmma_m64n128k16(d, desc_a, desc_b);
    }
}

template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

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

// The residual pairs of RG column tiles of one lane's two rows (row_base, row_base + 8) from column col0 (the first
// tile's pair; a tile is 8 columns further), zeros without a residual or past M / N: the read-ahead of store_tile
// and gemm_sm90_tma's stage_and_store_tile (see store_tile for why it reads a group ahead).
template <int RG>
__device__ __forceinline__ void load_residual_group(uint32_t (&res)[RG][2], const bf16* residual, int M, int N,
                                                    int row_base, int col0, bool has_res) {
#pragma unroll
    for (int jj = 0; jj < RG; ++jj) {
        const int col = col0 + jj * 8;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = row_base + half * 8;
            res[jj][half] = has_res && col < N && row < M
                                ? *reinterpret_cast<const uint32_t*>(residual + (size_t)row * N + col)
                                : 0u;
        }
    }
}

// Epilogue straight from the accumulators, as in gemm.cuh: + bias, GELU, + residual (which may alias C:
// each element is read and written by the same thread). The consumer's rows start at block_m + half_m.
//
// The residual is read a group of RG column tiles ahead of the group's stores. `residual` may alias C, so the
// compiler cannot move a load of it above an earlier store to C: read and stored one pair at a time, each thread
// has one global load in flight and the tile's epilogue waits out 2 BN / 8 load latencies in a row (the bias +
// residual shapes ran at 2/3 of the bias-only ones of the same K). Reading a group first is safe because every
// element is read, then written, by the same thread. RG: column tiles per group, 2 RG registers per thread.
template <int BM, int BN, int RG, int MI, int ACC>
__device__ __forceinline__ void store_tile(const float (&acc)[MI][ACC], const bf16* __restrict__ bias,
                                           const bf16* residual, bf16* C, int M, int N, int block_m, int half_m,
                                           int block_n, int warp, int lane, bool has_bias, bool has_gelu,
                                           bool has_res) {
    static_assert((BN / 8) % RG == 0, "whole groups of column tiles");
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
        const int row_base = block_m + half_m + mi * 64 + warp * 16 + (lane >> 2);
#pragma unroll
        for (int j0 = 0; j0 < BN / 8; j0 += RG) {
            uint32_t res[RG][2];
            load_residual_group<RG>(res, residual, M, N, row_base, block_n + j0 * 8 + (lane & 3) * 2, has_res);
#pragma unroll
            for (int jj = 0; jj < RG; ++jj) {
                const int j = j0 + jj;
                const int col = block_n + j * 8 + (lane & 3) * 2;
                if (col >= N) continue;   // N % 8 == 0, so col + 1 < N as well
                const float2 b = gemm::load_bias_pair(bias, col, has_bias);
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int row = row_base + half * 8;
                    if (row >= M) continue;
                    float v0 = acc[mi][4 * j + 2 * half] + b.x, v1 = acc[mi][4 * j + 2 * half + 1] + b.y;
                    if (has_gelu) {
                        v0 = gemm::gelu_erf(v0);
                        v1 = gemm::gelu_erf(v1);
                    }
                    const float2 r = unpack_bf16x2(res[jj][half]);   // zeros without a residual
                    *reinterpret_cast<uint32_t*>(C + (size_t)row * N + col) = pack_bf16x2(v0 + r.x, v1 + r.y);
                }
            }
        }
    }
}
#endif  // SAMSTREAM_SM90A

// Any 1-D grid: CTA b computes output tiles t = b, b + gridDim.x, ... (t -> row band t / n_tiles, column
// tile t % n_tiles: CTAs running together share A row bands). The host launches one CTA per tile (a
// persistent launch lost: bench/results/2026-11-30-h200-wgmma.md).
template <int BM, int BN, int STAGES>
__device__ __forceinline__ void gemm_bf16_sm90(const bf16* __restrict__ A, const bf16* __restrict__ W,
                                               const bf16* __restrict__ bias, const bf16* residual, bf16* C,
                                               int M, int N, int K, int epilogue) {
#ifdef SAMSTREAM_SM90A
    using Cfg = Config<BM, BN, STAGES>;
    constexpr int LAG = Cfg::LAG, ACC = Cfg::ACC, MI = Cfg::MI;

    extern __shared__ unsigned char smem_raw[];
    const Ring<STAGES, Cfg::A_BYTES, Cfg::B_BYTES> ring(smem_addr(smem_raw));   // A, W slots and the barriers

    const int tid = threadIdx.x, wg = tid / 128;
    const int k_tiles = (K + BK - 1) / BK;
    const int n_tiles = (N + BN - 1) / BN;
    const int tiles = ((M + BM - 1) / BM) * n_tiles;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(ring.full(s), 128);   // every producer thread arrives once per k tile
            mbar_init(ring.empty(s), 8);    // lane 0 of each consumer warp
        }
    }
    __syncthreads();

    if (wg == 0) {
        // ------------------------------------------------------------------ producer
        if constexpr (Cfg::REBALANCE) setmaxnreg_dec<40>();
        const int chunk = tid & 7;               // this thread's 16-byte chunk of every row it copies
        const int row0 = tid >> 3;               // rows row0, row0 + 16, ...
        const uint32_t swz = (uint32_t)((chunk ^ (row0 & 7)) * 16);   // row0 + 16 i has the same row % 8
        int g = 0;                               // k tiles issued by this CTA so far (all its output tiles)
        for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
            const int block_m = (t / n_tiles) * BM, block_n = (t % n_tiles) * BN;
            for (int kt = 0; kt < k_tiles; ++kt, ++g) {
                const int s = g % STAGES;
                if (g >= STAGES) mbar_wait(ring.empty(s), ((g / STAGES) + 1) & 1);
                // Few live registers (the producer may run on 40): one running source pointer per operand,
                // rows past M / N and columns past K zero-filled.
                load_k_tile<BM, BN>(ring.a(s), ring.b(s), A, W, M, N, K, block_m, block_n,
                                    kt, chunk, row0, swz);
                cp_async_commit();
                v1_complete_lagging_stage<LAG, STAGES>(g, ring.full(0));
            }
        }
        v1_complete_remaining_stages<LAG, STAGES>(g, ring.full(0));
        return;
    }

    // ---------------------------------------------------------------------- consumers
    if constexpr (Cfg::REBALANCE) setmaxnreg_inc<232>();
    const int cw = wg - 1;                          // consumer 0: rows 0 .. BM/2-1, 1: the rest
    const int warp = (tid >> 5) & 3, lane = tid & 31;
    const bool has_bias = (epilogue & gemm::BIAS) != 0, has_gelu = (epilogue & gemm::GELU) != 0,
               has_res = (epilogue & gemm::RESIDUAL) != 0;
    float acc[MI][ACC];
    int g = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int block_m = (t / n_tiles) * BM, block_n = (t % n_tiles) * BN;
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int i = 0; i < ACC; ++i) acc[mi][i] = 0.f;

        for (int kt = 0; kt < k_tiles; ++kt, ++g) {
            const int s = g % STAGES;
            mbar_wait(ring.full(s), (g / STAGES) & 1);
            mma_k_tile<BN>(acc, ring.a(s) + cw * (BM / 2) * 128, ring.b(s));
            if (kt > 0 && lane == 0) mbar_arrive(ring.empty((g - 1) % STAGES));
        }
        wgmma_wait<0>();
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) fence_acc(acc[mi]);
        if (lane == 0) mbar_arrive(ring.empty((g - 1) % STAGES));   // the tile's last slot: free for the producer

        store_tile<BM, BN, Cfg::EPILOGUE_GROUP>(acc, bias, residual, C, M, N, block_m, cw * (BM / 2), block_n, warp, lane, has_bias,
                           has_gelu, has_res);
    }
#else
    __trap();   // not an sm_90a build: the host never launches this kernel here
#endif
}

}  // namespace gemm_sm90
