// The kernel entry points of the samstream CUDA backend: this file is the one translation unit that
// build-fatbin.sh compiles into samstream_kernels.fatbin (loaded at run time with cuModuleLoadData by
// io.samstream.gpu.cuda.CudaKernels, which looks the functions up by these extern "C" names and
// checks every argument before launching).
//
// The algorithms live in the headers; here each is instantiated for the shapes SAM needs.

#include "attention.cuh"
#include "gemm.cuh"
#include "layernorm.cuh"

// Bumped whenever a signature below changes; CudaKernels refuses a fatbin of another version.
extern "C" __device__ const int samstream_kernels_abi = 1;

// ---- GEMM: C = A . W^T (+bias) (GELU) (+residual) ---------------------------------------------
// 128x128 tiles, 4 warps of 64x64, 4-stage ring (80 KB shared): two CTAs per SM.
extern "C" __global__ void __launch_bounds__(128) samstream_gemm_bf16_128x128(
    const bf16* A, const bf16* W, const bf16* bias, const bf16* residual, bf16* C, int M, int N, int K,
    int epilogue) {
    gemm::gemm_bf16<128, 128, 2, 2, 4>(A, W, bias, residual, C, M, N, K, epilogue);
}

// 128x256 tiles, 8 warps of 64x64, 3-stage ring (90 KB shared): fewer operand reloads per FLOP.
extern "C" __global__ void __launch_bounds__(256) samstream_gemm_bf16_128x256(
    const bf16* A, const bf16* W, const bf16* bias, const bf16* residual, bf16* C, int M, int N, int K,
    int epilogue) {
    gemm::gemm_bf16<128, 256, 2, 4, 3>(A, W, bias, residual, C, M, N, K, epilogue);
}

// ---- LayerNorm (optionally fused with a residual add), 8 rows per 256-thread CTA ----------------
extern "C" __global__ void __launch_bounds__(256) samstream_layernorm_bf16(
    const bf16* x, const bf16* residual, bf16* sum_out, const bf16* gamma, const bf16* beta, bf16* y,
    int rows, int C, float eps) {
    layernorm::layernorm_bf16(x, residual, sum_out, gamma, beta, y, rows, C, eps);
}

// ---- Attention with decomposed relative position bias -------------------------------------------
// Grid: x = query blocks of the sequence (16 * warps queries each), y = heads, z = images x windows.
// 4 warps (64 queries) for global attention; 7 warps (112 queries, two CTAs per 14x14 window).
#define SAMSTREAM_ATTENTION(HD, NW)                                                                   \
    extern "C" __global__ void __launch_bounds__(32 * NW) samstream_attention_hd##HD##_w##NW(       \
        const bf16* qkv, const bf16* qkv_bias, const bf16* rel_h, const bf16* rel_w, bf16* out, int H, \
        int W, int heads, int window, float scale) {                                                  \
        attention::attention_fwd<HD, NW>(qkv, qkv_bias, rel_h, rel_w, out, H, W, heads, window, scale); \
    }

SAMSTREAM_ATTENTION(64, 4)
SAMSTREAM_ATTENTION(64, 7)
SAMSTREAM_ATTENTION(80, 4)
SAMSTREAM_ATTENTION(80, 7)
