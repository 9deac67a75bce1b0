// Small device helpers shared by the samstream kernels: bf16 packing, cp.async, ldmatrix, mma.
//
// Everything here is a thin, named wrapper around one PTX instruction so that the kernels read as
// "load a tile, multiply, write" rather than as inline assembly. Requires sm_80+ (bf16 mma, cp.async).
#pragma once

#include <cuda_bf16.h>
#include <stdint.h>

typedef __nv_bfloat16 bf16;

// ---------------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------------

// Two floats -> one 32-bit register holding two bf16 (round to nearest even); `lo` goes to the lower
// address, which is also the lower k / column index in every mma fragment.
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
}

__device__ __forceinline__ float2 unpack_bf16x2(uint32_t v) {
    __nv_bfloat162 h = *reinterpret_cast<__nv_bfloat162*>(&v);
    return __bfloat1622float2(h);
}

// Eight bf16 values (one 16-byte load) plus eight more, summed in fp32 and rounded once: the element-wise adds of the
// data-movement kernels (position embeddings, window unpartition, the FPN's top-down sum, residual-free sums).
__device__ __forceinline__ uint4 add_bf16x8(uint4 a, uint4 b) {
    uint32_t* as = reinterpret_cast<uint32_t*>(&a);
    const uint32_t* bs = reinterpret_cast<const uint32_t*>(&b);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const float2 p = unpack_bf16x2(as[k]), q = unpack_bf16x2(bs[k]);
        as[k] = pack_bf16x2(p.x + q.x, p.y + q.y);
    }
    return a;
}

// 2^x on the special-function unit (what flash attention uses for its softmax); ftz is harmless
// here: the arguments are <= 0 and results below 2^-126 are zeros of the softmax anyway.
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// ---------------------------------------------------------------------------------------------
// Asynchronous global -> shared copies (sm_80 cp.async)
// ---------------------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Copies 16 bytes, or writes 16 zero bytes when `valid` is false (src-size 0: nothing is read, so
// `src` only has to be some mapped address). Zero fill is how every kernel masks ragged tile edges.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
    int src_bytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// ---------------------------------------------------------------------------------------------
// Tensor-core fragments
// ---------------------------------------------------------------------------------------------

// Four 8x8 b16 matrices from shared memory; lane l gives the row address of matrix l/8, row l%8.
// Thread t receives, from each matrix, row t/4, columns 2*(t%4) and 2*(t%4)+1.
__device__ __forceinline__ void ldmatrix_x4(uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3,
                                            uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

// The same, each 8x8 matrix transposed on the way: thread t receives column t/4, rows 2*(t%4), +1.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3,
                                                  uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

// D[16x8] += A[16x16] * B[16x8], bf16 inputs, fp32 accumulators.
// Fragment layout (g = lane/4, q = lane%4):
//   a[0]: A[g][2q..2q+1]     a[1]: A[g+8][2q..2q+1]   a[2]: A[g][2q+8..]   a[3]: A[g+8][2q+8..]
//   b[0]: B[2q..2q+1][g]     b[1]: B[2q+8..2q+9][g]
//   c[0..1]: D[g][2q..2q+1]  c[2..3]: D[g+8][2q..2q+1]
__device__ __forceinline__ void mma_bf16_16816(float c[4], const uint32_t a[4], const uint32_t b[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
