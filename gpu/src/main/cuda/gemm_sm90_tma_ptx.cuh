// PTX wrappers of the TMA-fed Hopper kernels (sm_90a): bulk tensor loads (and their multicast into a cluster),
// transaction-count arrivals, tensor-map prefetch, cluster ranks / arrivals / barriers, bulk tensor stores and their
// groups, warpgroup barriers. Shared by gemm_sm90_tma.cuh and gemm_sparse_sm90_tma.cuh.
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

// The same box written to `dst` in every CTA of the cluster named by `cta_mask`, each completing on its own `bar`
// (the same shared-memory offsets in every destination CTA).
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap& map, int c0, int c1, uint32_t bar,
                                                      uint16_t cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(&map)), "r"(c0), "r"(c1), "r"(bar), "h"(cta_mask)
        : "memory");
}

__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap& map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map)) : "memory");
}

__device__ __forceinline__ uint32_t cluster_cta_rank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// Arrives on the mbarrier at the same shared-memory offset as `bar` in cluster CTA `rank` (release, cluster scope).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
    asm volatile(
        "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
        "r"(rank)
        : "memory");
}

// Every thread of every CTA of the cluster: arrive, then wait for all (orders the barriers' initialisation before
// any remote use, and keeps a CTA's shared memory alive until its partner is done with it).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void fence_mbarrier_init_cluster() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
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
