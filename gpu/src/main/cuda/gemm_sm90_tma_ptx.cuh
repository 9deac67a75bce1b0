// PTX wrappers of the TMA-fed Hopper kernels (sm_90a): bulk tensor loads, transaction-count arrivals, tensor-map
// prefetch, bulk tensor stores and their groups, warpgroup barriers. Shared by gemm_sm90_tma.cuh and
// gemm_sparse_sm90_tma.cuh.
#pragma once

#include <cuda.h>   // CUtensorMap

#include "common.cuh"
#include "gemm_sm90_ptx.cuh"

namespace gemm_sm90_tma {

#ifdef SAMSTREAM_SM90A

// One arrival on `bar` that also expects `bytes` more transaction bytes in the current phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// The box of `map` at element coordinates (c0 innermost, c1) into shared memory at `dst`, completing on `bar`.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap& map, int c0, int c1, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
            dst),
        "l"(reinterpret_cast<uint64_t>(&map)), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}

__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap& map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map)) : "memory");
}

// ---- TMA stores (TMA_STORE): shared memory -> global by the tensor map of C, tracked as bulk groups of the issuing
// thread.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap& map, uint32_t src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                     reinterpret_cast<uint64_t>(&map)),
                 "r"(src), "r"(c0), "r"(c1)
                 : "memory");
}

__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

// Until the TMA unit has read the sources of all but N of this thread's committed bulk groups.
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

// Until all but N of this thread's committed bulk groups are complete (their global writes done).
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

// The threads of one warpgroup (named barrier `id`; 0 is __syncthreads').
__device__ __forceinline__ void warpgroup_sync(int id) {
    asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory");
}

__device__ __forceinline__ void st_shared_u32(uint32_t addr, uint32_t v) {
    asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

#endif  // SAMSTREAM_SM90A

}  // namespace gemm_sm90_tma
