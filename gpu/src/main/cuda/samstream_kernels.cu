// The kernel entry points of the samstream CUDA backend: this file is the one translation unit that
// build-fatbin.sh compiles into samstream_kernels.fatbin (loaded at run time with cuModuleLoadData by
// io.samstream.gpu.cuda.CudaKernels, which looks the functions up by these extern "C" names and
// checks every argument before launching).
//
// The algorithms live in the headers; here each is instantiated for the shapes SAM needs.

#include "attention.cuh"
#include "encoder_ops.cuh"
#include "gemm.cuh"
#include "gemm_sm90.cuh"
#include "layernorm.cuh"

// Bumped whenever a signature below changes; CudaKernels refuses a fatbin of another version.
extern "C" __device__ const int samstream_kernels_abi = 3;

// ---- GEMM: C = A . W^T (+bias) (GELU) (+residual) ---------------------------------------------
// Warp tiles are 64x64 throughout (the best operand reuse per ldmatrix); the variants differ in CTA
// tile, K step and ring depth. Shared memory: 128x128/32x4: 80 KB, 128x128/64x3: 108 KB (two CTAs
// per SM either way), 128x256/32x4: 120 KB, 128x256/64x3: 162 KB (one CTA per SM).
#define SAMSTREAM_GEMM(NAME, BM, BN, BK, WM, WN, STAGES)                                              \
    extern "C" __global__ void __launch_bounds__(WM * WN * 32) NAME(                                 \
        const bf16* A, const bf16* W, const bf16* bias, const bf16* residual, bf16* C, int M, int N,  \
        int K, int epilogue) {                                                                        \
        gemm::gemm_bf16<BM, BN, BK, WM, WN, STAGES>(A, W, bias, residual, C, M, N, K, epilogue);      \
    }

SAMSTREAM_GEMM(samstream_gemm_bf16_128x128x32, 128, 128, 32, 2, 2, 4)
SAMSTREAM_GEMM(samstream_gemm_bf16_128x128x64, 128, 128, 64, 2, 2, 3)
SAMSTREAM_GEMM(samstream_gemm_bf16_128x256x32, 128, 256, 32, 2, 4, 4)
SAMSTREAM_GEMM(samstream_gemm_bf16_128x256x64, 128, 256, 64, 2, 4, 3)

// ---- Hopper GEMM (gemm_sm90.cuh): same signature and function, wgmma + warp-specialised cp.async pipeline;
// 384 threads (producer warpgroup + two consumer warpgroups of BM/2 rows), 1-D grid over the output tiles
// (one CTA per tile, or persistent), one CTA per SM. Shared memory: 128x256 x 4 stages: 193 KB, 256x192 x 4: 225 KB, 128x128 x 6: 193 KB.
// Bodies exist for sm_90a only (trap elsewhere).
#define SAMSTREAM_GEMM_SM90(NAME, BM, BN, STAGES)                                                     \
    extern "C" __global__ void __launch_bounds__(384, 1) NAME(                                        \
        const bf16* A, const bf16* W, const bf16* bias, const bf16* residual, bf16* C, int M, int N,  \
        int K, int epilogue) {                                                                        \
        gemm_sm90::gemm_bf16_sm90<BM, BN, STAGES>(A, W, bias, residual, C, M, N, K, epilogue);        \
    }

SAMSTREAM_GEMM_SM90(samstream_gemm_sm90_128x256, 128, 256, 4)
SAMSTREAM_GEMM_SM90(samstream_gemm_sm90_256x192, 256, 192, 4)
SAMSTREAM_GEMM_SM90(samstream_gemm_sm90_128x128, 128, 128, 6)

// ---- LayerNorm (optionally fused with a residual add), 8 rows per 256-thread CTA ----------------
extern "C" __global__ void __launch_bounds__(256) samstream_layernorm_bf16(
    const bf16* x, const bf16* residual, bf16* sum_out, const bf16* gamma, const bf16* beta, bf16* y,
    int rows, int C, float eps) {
    layernorm::layernorm_bf16(x, residual, sum_out, gamma, beta, y, rows, C, eps);
}

// ---- Attention with decomposed relative position bias -------------------------------------------
// Grid: x = query blocks of the sequence (16 * warps queries each), y = heads, z = images x windows.
// "row" kernels: key tiles of one sequence row (sequences wider than 32 tokens: global attention),
//   4 warps (64 queries, one grid row of 64 per CTA).
// "rows" kernels: key tiles of several sequence rows (narrow sequences: 14 x 14 windows), 7 warps
//   (112 queries: two CTAs per window).
// Both ask for two CTAs per SM: the "row" kernels fit in 184 registers; the "rows" kernels are capped at
// 128 (a few spilled values) instead of ~180 and one CTA per SM.
#define SAMSTREAM_ATTENTION(HD, NW, MINB, ONE_ROW, SUFFIX)                                                 \
    extern "C" __global__ void __launch_bounds__(32 * NW, MINB) samstream_attention_hd##HD##_##SUFFIX(  \
        const bf16* qkv, const bf16* qkv_bias, const bf16* rel_h, const bf16* rel_w, bf16* out, int H, \
        int W, int heads, int window, float scale) {                                                  \
        attention::attention_fwd<HD, NW, ONE_ROW>(qkv, qkv_bias, rel_h, rel_w, out, H, W, heads, window, \
                                                  scale);                                             \
    }

SAMSTREAM_ATTENTION(64, 4, 2, true, row)
SAMSTREAM_ATTENTION(64, 7, 2, false, rows)
SAMSTREAM_ATTENTION(80, 4, 2, true, row)
SAMSTREAM_ATTENTION(80, 7, 2, false, rows)
// Narrow heads (SAM-family test models and small ViTs): same kernel, fewer k16 steps.
SAMSTREAM_ATTENTION(16, 4, 2, true, row)
SAMSTREAM_ATTENTION(16, 7, 2, false, rows)
SAMSTREAM_ATTENTION(32, 4, 2, true, row)
SAMSTREAM_ATTENTION(32, 7, 2, false, rows)

// ---- image encoder data movement (encoder_ops.cuh); grid-stride loops, 256 threads --------------------
extern "C" __global__ void __launch_bounds__(256) samstream_patchify_f32(const float* img, bf16* rows, int B, int S,
                                                                         int P) {
    encoder_ops::patchify_f32(img, rows, B, S, P);
}

extern "C" __global__ void __launch_bounds__(256) samstream_add_periodic_bf16(bf16* x, const bf16* add,
                                                                              long long total, long long period) {
    encoder_ops::add_periodic_bf16(x, add, total, period);
}

extern "C" __global__ void __launch_bounds__(256) samstream_im2col3x3_bf16(const bf16* x, bf16* rows, int B, int H,
                                                                           int W, int C) {
    encoder_ops::im2col3x3_bf16(x, rows, B, H, W, C);
}

// Block (32, 8), grid (ceil(T/32), ceil(C/32), B).
extern "C" __global__ void __launch_bounds__(256) samstream_tokens_to_chw_f32(const bf16* y, float* out, int T,
                                                                              int C) {
    encoder_ops::tokens_to_chw_f32(y, out, T, C);
}
