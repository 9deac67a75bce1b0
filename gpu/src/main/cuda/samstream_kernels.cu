// The kernel entry points of the samstream CUDA backend: this file is the one translation unit that
// build-fatbin.sh compiles into samstream_kernels.fatbin (loaded at run time with cuModuleLoadData by
// io.samstream.gpu.cuda.CudaKernels, which looks the functions up by these extern "C" names; the launchers of
// io.samstream.gpu.cuda.kernels, one family per class, check every argument before launching).
//
// The algorithms live in the headers; here each is instantiated for the shapes SAM needs.

#include "attention.cuh"
#include "attention_sm90.cuh"
#include "decoder_ops.cuh"
#include "detr_ops.cuh"
#include "encoder_ops.cuh"
#include "fp8_quant.cuh"
#include "gemm.cuh"
#include "gemm_sparse.cuh"
#include "gemm_sm90.cuh"
#include "gemm_sm90_tma.cuh"
#include "gemm_sparse_sm90.cuh"
#include "gemm_sparse_sm90_tma.cuh"
#include "group_norm.cuh"
#include "layernorm.cuh"

// Bumped whenever a signature below changes or a kernel is removed; CudaKernels refuses a fatbin of another version.
extern "C" __device__ const int samstream_kernels_abi = 10;

// The dynamic shared memory an entry point of fixed size is built for, as a __device__ constant
// samstream_smem_<entry point>: build-fatbin.sh reads these (with the entry points and the ABI version) from the
// compile's PTX into the kernel table bundled next to the fatbin, samstream_kernels.tsv, against which
// KernelTableTest checks what the Java launchers ask for.
#define SAMSTREAM_SMEM(NAME, BYTES) extern "C" __device__ const int samstream_smem_##NAME = (BYTES);

// ---- GEMM: C = A . W^T (+bias) (GELU) (+residual) ---------------------------------------------
// 64x64 warp tiles, CTA tile 128x128, K step 64, a 3-stage ring: 108 KB of shared memory, two CTAs per SM.
// The GEMM of every GPU but sm_90 (bench/results/README.md: the other tiles were removed).
#define SAMSTREAM_GEMM(NAME, BM, BN, BK, WM, WN, STAGES)                                              \
    extern "C" __global__ void __launch_bounds__(WM * WN * 32) NAME(                                 \
        const bf16* A, const bf16* W, const bf16* bias, const bf16* residual, bf16* C, int M, int N,  \
        int K, int epilogue) {                                                                        \
        gemm::gemm_bf16<BM, BN, BK, WM, WN, STAGES>(A, W, bias, residual, C, M, N, K, epilogue);      \
    }                                                                                                 \
    SAMSTREAM_SMEM(NAME, (gemm::Config<BM, BN, BK, WM, WN, STAGES>::SMEM_BYTES))

SAMSTREAM_GEMM(samstream_gemm_bf16_128x128x64, 128, 128, 64, 2, 2, 3)

// ---- Hopper GEMM (gemm_sm90.cuh): same signature and function, wgmma + warp-specialised cp.async pipeline;
// 384 threads (producer warpgroup + two consumer warpgroups of BM/2 rows), 1-D grid with one CTA per output tile,
// one CTA per SM. Shared memory: 128x256 x 4 stages: 193 KB, 128x128 x 6: 193 KB. The fallback of the TMA tiles
// below where tensor maps cannot be made. Bodies exist for sm_90a only (trap elsewhere).
#define SAMSTREAM_GEMM_SM90(NAME, BM, BN, STAGES)                                                     \
    extern "C" __global__ void __launch_bounds__(384, 1) NAME(                                        \
        const bf16* A, const bf16* W, const bf16* bias, const bf16* residual, bf16* C, int M, int N,  \
        int K, int epilogue) {                                                                        \
        gemm_sm90::gemm_bf16_sm90<BM, BN, STAGES>(A, W, bias, residual, C, M, N, K, epilogue);        \
    }                                                                                                 \
    SAMSTREAM_SMEM(NAME, (gemm_sm90::Config<BM, BN, STAGES>::SMEM_BYTES))

SAMSTREAM_GEMM_SM90(samstream_gemm_sm90_128x256, 128, 256, 4)
SAMSTREAM_GEMM_SM90(samstream_gemm_sm90_128x128, 128, 128, 6)

// ---- Hopper GEMM fed by TMA (gemm_sm90_tma.cuh), the default on sm_90: the same function and epilogue; A, W and C
// come as tensor maps (__grid_constant__, encoded on the host by TensorMaps), C is staged in shared memory and written
// by TMA stores; persistent 1-D grid (min(tiles, SMs)), one CTA per SM. PINGPONG: the consumer warpgroups take whole
// tiles in turn (TileChoice picks it for K < 2048 without GELU). Shared memory: 226 KB for every tile.
#define SAMSTREAM_GEMM_SM90_TMA_STORE(NAME, BN, STAGES, PINGPONG)                                                  \
    extern "C" __global__ void __launch_bounds__(384, 1) NAME(                                                     \
        const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_w,                      \
        const __grid_constant__ CUtensorMap map_c, const bf16* bias, const bf16* residual, int M, int N, int K,    \
        int epilogue) {                                                                                            \
        gemm_sm90_tma::gemm_bf16_sm90_tma<BN, STAGES, true, PINGPONG>(map_a, map_w, &map_c, bias, residual,     \
                                                                         nullptr, M, N, K, epilogue);              \
    }                                                                                                              \
    SAMSTREAM_SMEM(NAME, (gemm_sm90_tma::Config<BN, STAGES, true, PINGPONG>::SMEM_BYTES))
SAMSTREAM_GEMM_SM90_TMA_STORE(samstream_gemm_sm90tmas_128x256, 256, 4, false)
SAMSTREAM_GEMM_SM90_TMA_STORE(samstream_gemm_sm90tmas_128x128, 128, 6, false)
SAMSTREAM_GEMM_SM90_TMA_STORE(samstream_gemm_sm90tmap_128x128, 128, 6, true)

// ---- FP8 (e4m3) Hopper GEMM (gemm_sm90_tma.cuh with E4M3): C = (qa . qw^T) * a_scale[row] * w_scale[col] (+bias)
// (GELU) (+residual), e4m3 operands as u8 tensor maps (boxes of 128 x 128 bytes), fp32 accumulation, bf16 C by TMA
// stores; the tiles, stages, shared memory (226 KB) and launch of the bf16 TMA kernels above. sm_90a only.
#define SAMSTREAM_GEMM_E4M3_SM90_TMA(NAME, BN, STAGES, PINGPONG)                                                   \
    extern "C" __global__ void __launch_bounds__(384, 1) NAME(                                                     \
        const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_w,                      \
        const __grid_constant__ CUtensorMap map_c, const float* a_scale, const float* w_scale, const bf16* bias,   \
        const bf16* residual, int M, int N, int K, int epilogue) {                                                 \
        gemm_sm90_tma::gemm_bf16_sm90_tma<BN, STAGES, true, PINGPONG, true>(map_a, map_w, &map_c, bias, residual, \
                                                                            nullptr, M, N, K, epilogue, a_scale,  \
                                                                            w_scale);                             \
    }                                                                                                              \
    SAMSTREAM_SMEM(NAME, (gemm_sm90_tma::Config<BN, STAGES, true, PINGPONG>::SMEM_BYTES))
SAMSTREAM_GEMM_E4M3_SM90_TMA(samstream_gemm_e4m3_sm90tmas_128x256, 256, 4, false)
SAMSTREAM_GEMM_E4M3_SM90_TMA(samstream_gemm_e4m3_sm90tmas_128x128, 128, 6, false)
SAMSTREAM_GEMM_E4M3_SM90_TMA(samstream_gemm_e4m3_sm90tmap_128x128, 128, 6, true)

// ---- Block-scaled FP8 for mlp.lin1 -> lin2 (gemm_fp8_sm90_blockscale.cuh), sm_90a only:
//   e4m3o: lin1, C = GELU((qa . qw^T) a_scale[row] w_scale[col] + bias) written as e4m3 through map_c (u8 [M, N], box
//          128 x 64) with out_scale [M, N / 128] (one scale per row and 128 columns); N % 128 == 0, no residual.
//   e4m3b: lin2, a_scale [M, K / 128] (lin1's out_scale) applied per k tile in the mainloop, w_scale, bias and residual
//          in the bf16 epilogue; the cooperative 128 x 128 tile only (the ping-pong one lost: 2026-12-05-h100-fp8-blockscale).
#define SAMSTREAM_GEMM_E4M3_OUT_SM90_TMA(NAME, BN, STAGES, PINGPONG)                                               \
    extern "C" __global__ void __launch_bounds__(384, 1) NAME(                                                     \
        const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_w,                      \
        const __grid_constant__ CUtensorMap map_c, const float* a_scale, const float* w_scale, const bf16* bias,   \
        float* out_scale, int M, int N, int K, int epilogue) {                                                     \
        gemm_sm90_tma::gemm_bf16_sm90_tma<BN, STAGES, true, PINGPONG, true, gemm_sm90_tma::FP8_E4M3_OUT>(          \
            map_a, map_w, &map_c, bias, nullptr, nullptr, M, N, K, epilogue, a_scale, w_scale, out_scale);       \
    }                                                                                                              \
    SAMSTREAM_SMEM(NAME, (gemm_sm90_tma::Config<BN, STAGES, true, PINGPONG>::SMEM_BYTES))
SAMSTREAM_GEMM_E4M3_OUT_SM90_TMA(samstream_gemm_e4m3o_sm90tmas_128x256, 256, 4, false)
SAMSTREAM_GEMM_E4M3_OUT_SM90_TMA(samstream_gemm_e4m3o_sm90tmas_128x128, 128, 6, false)
SAMSTREAM_GEMM_E4M3_OUT_SM90_TMA(samstream_gemm_e4m3o_sm90tmap_128x128, 128, 6, true)
#define SAMSTREAM_GEMM_E4M3_BLOCK_SM90_TMA(NAME, BN, STAGES, PINGPONG)                                             \
    extern "C" __global__ void __launch_bounds__(384, 1) NAME(                                                     \
        const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_w,                      \
        const __grid_constant__ CUtensorMap map_c, const float* a_scale, const float* w_scale, const bf16* bias,   \
        const bf16* residual, int M, int N, int K, int epilogue) {                                                 \
        gemm_sm90_tma::gemm_bf16_sm90_tma<BN, STAGES, true, PINGPONG, true, gemm_sm90_tma::FP8_BLOCK_IN>(          \
            map_a, map_w, &map_c, bias, residual, nullptr, M, N, K, epilogue, a_scale, w_scale);                 \
    }                                                                                                              \
    SAMSTREAM_SMEM(NAME, (gemm_sm90_tma::Config<BN, STAGES, true, PINGPONG>::SMEM_BYTES))
SAMSTREAM_GEMM_E4M3_BLOCK_SM90_TMA(samstream_gemm_e4m3b_sm90tmas_128x128, 128, 6, false)

// ---- 2:4-sparse GEMM (gemm_sparse.cuh): same epilogue; W as compressed values + mma.sp metadata ------
// Tile: BN weight rows (output columns) x BM activation rows, 64 x 64 warp tiles, K step 64, 3 stages.
// Shared memory: 128x128: 87 KB (two CTAs per SM). The 2:4 GEMM of every GPU but sm_90.
#define SAMSTREAM_GEMM_SPARSE(NAME, BN, BM, WN, WM, STAGES)                                              \
    extern "C" __global__ void __launch_bounds__(WN * WM * 32) NAME(                                    \
        const bf16* A, const bf16* Wv, const uint32_t* Wm, const bf16* bias, const bf16* residual, bf16* C, \
        int M, int N, int K, int epilogue) {                                                            \
        gemm_sparse::gemm_sparse_bf16<BN, BM, WN, WM, STAGES>(A, Wv, Wm, bias, residual, C, M, N, K, epilogue); \
    }                                                                                                   \
    SAMSTREAM_SMEM(NAME, (gemm_sparse::Config<BN, BM, WN, WM, STAGES>::SMEM_BYTES))

SAMSTREAM_GEMM_SPARSE(samstream_gemm_sparse_128x128, 128, 128, 2, 2, 3)

// ---- 2:4-sparse Hopper GEMM (gemm_sparse_sm90.cuh): wgmma.mma_async.sp, 128 weight rows x 128 activation rows,
// 128 k per stage, 4 stages (200 KB), 384 threads, 1-D grid over the output tiles: the fallback of the TMA tiles below
// where tensor maps cannot be made. sm_90a only (traps elsewhere).
extern "C" __global__ void __launch_bounds__(384, 1) samstream_gemm_sparse_sm90_128x128(
    const bf16* A, const bf16* Wv, const uint32_t* Wm, const bf16* bias, const bf16* residual, bf16* C, int M, int N,
    int K, int epilogue) {
    gemm_sparse_sm90::gemm_sparse_bf16_sm90<4>(A, Wv, Wm, bias, residual, C, M, N, K, epilogue);
}
SAMSTREAM_SMEM(samstream_gemm_sparse_sm90_128x128, gemm_sparse_sm90::Config<4>::SMEM_BYTES)

// ---- 2:4-sparse Hopper GEMM fed and drained by TMA (gemm_sparse_sm90_tma.cuh): the same tile and instruction, A, the
// values, the metadata, C and the residual as tensor maps (map_r: any valid map without a residual), persistent 1-D
// grid (min(tiles, SMs)), 3 stages; "tmas": cooperative consumers, "tmap": ping-pong consumers (each a whole tile in
// turn). sm_90a only (traps elsewhere).
#define SAMSTREAM_GEMM_SPARSE_SM90_TMA(NAME, PINGPONG)                                                                \
    extern "C" __global__ void __launch_bounds__(384, 1) NAME(                                                     \
        const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_v,                      \
        const __grid_constant__ CUtensorMap map_e, const __grid_constant__ CUtensorMap map_c,                      \
        const __grid_constant__ CUtensorMap map_r, const bf16* bias, int M, int N, int K, int epilogue) {          \
        gemm_sparse_sm90_tma::gemm_sparse_bf16_sm90_tma<PINGPONG>(map_a, map_v, map_e, map_c, map_r, bias, M, N, K, \
                                                                  epilogue);                                       \
    }                                                                                                              \
    SAMSTREAM_SMEM(NAME, (gemm_sparse_sm90_tma::Config<PINGPONG>::SMEM_BYTES))
SAMSTREAM_GEMM_SPARSE_SM90_TMA(samstream_gemm_sparse_sm90tmas_128x128, false)
SAMSTREAM_GEMM_SPARSE_SM90_TMA(samstream_gemm_sparse_sm90tmap_128x128, true)

// ---- SAM 3's DETR decoder around its GEMMs (detr_ops.cuh) -------------------------------------------------------
extern "C" __global__ void __launch_bounds__(256) samstream_detr_box_deltas(const float* boxes, bf16* dy, bf16* dx,
                                                                           int n, int H, int W) {
    detr_ops::box_deltas(boxes, dy, dx, n, H, W);
}

extern "C" __global__ void __launch_bounds__(256) samstream_detr_box_sine(const float* boxes, bf16* out, int n,
                                                                         int d) {
    detr_ops::box_sine(boxes, out, n, d);
}

extern "C" __global__ void __launch_bounds__(256) samstream_detr_small_linear(const bf16* x, const float* w,
                                                                             const float* b, float* y, int rows,
                                                                             int k, int o) {
    detr_ops::small_linear(x, w, b, y, rows, k, o);
}

extern "C" __global__ void __launch_bounds__(256) samstream_detr_box_update(float* boxes, const float* delta, int n) {
    detr_ops::box_update(boxes, delta, n);
}

// Grid (ceil(rows / detr_ops::RPB_ROWS), heads), block detr_ops::ATTN_THREADS (256).
extern "C" __global__ void __launch_bounds__(256) samstream_detr_rpb_attention(const bf16* q, const bf16* k,
                                                                              const bf16* v, const bf16* ey,
                                                                              const bf16* ex, int ld, bf16* out,
                                                                              int rows, int d, int hd, int H, int W,
                                                                              float scale) {
    detr_ops::rpb_attention(q, k, v, ey, ex, ld, out, rows, d, hd, H, W, scale);
}

// ---- GroupNorm (+ ReLU) of one channels-last image: partial sums on a (64, G) grid, then the apply --------------
extern "C" __global__ void __launch_bounds__(256) samstream_group_norm_partials_bf16(const bf16* x, double* partials,
                                                                                    long long pixels, int C, int G) {
    group_norm::partials_bf16(x, partials, pixels, C, G);
}

extern "C" __global__ void __launch_bounds__(256) samstream_group_norm_apply_bf16(bf16* x, const double* partials,
                                                                                 const float* gamma,
                                                                                 const float* beta, long long pixels,
                                                                                 int C, int G, float eps, int relu) {
    group_norm::apply_bf16(x, partials, gamma, beta, pixels, C, G, eps, relu);
}

// ---- LayerNorm (optionally fused with a residual add), 8 rows per 256-thread CTA ----------------
// samstream_layernorm_bf16: C <= 2048; samstream_layernorm_bf16_vN: C <= 256 N, with only that much of the row in
// registers (more warps resident; NormKernels.layerNorm picks the smallest that holds C).
#define SAMSTREAM_LAYERNORM(NAME, VEC)                                                                   \
    extern "C" __global__ void __launch_bounds__(256) NAME(const bf16* x, const bf16* residual,          \
                                                           bf16* sum_out, const bf16* gamma,            \
                                                           const bf16* beta, bf16* y, int rows, int C,  \
                                                           float eps) {                                 \
        layernorm::layernorm_bf16<VEC>(x, residual, sum_out, gamma, beta, y, rows, C, eps);               \
    }
SAMSTREAM_LAYERNORM(samstream_layernorm_bf16, layernorm::MAX_VEC)
SAMSTREAM_LAYERNORM(samstream_layernorm_bf16_v1, 1)
SAMSTREAM_LAYERNORM(samstream_layernorm_bf16_v2, 2)
SAMSTREAM_LAYERNORM(samstream_layernorm_bf16_v3, 3)
SAMSTREAM_LAYERNORM(samstream_layernorm_bf16_v4, 4)
SAMSTREAM_LAYERNORM(samstream_layernorm_bf16_v5, 5)

// ---- FP8 activation quantization (fp8_quant.cuh), 8 rows per 256-thread CTA, rows of C <= 256 VEC: bf16 rows ->
// e4m3 bytes + a per-row fp32 scale, as they are (quantize) or after a LayerNorm (layernorm_e4m3). Every target.
#define SAMSTREAM_QUANTIZE_E4M3(NAME, VEC)                                                                  \
    extern "C" __global__ void __launch_bounds__(256) NAME(const bf16* x, uint8_t* q, float* scale, int rows, \
                                                           int C) {                                         \
        fp8_quant::quantize_rows<VEC>(x, q, scale, rows, C);                                                \
    }
SAMSTREAM_QUANTIZE_E4M3(samstream_quantize_e4m3_v1, 1)
SAMSTREAM_QUANTIZE_E4M3(samstream_quantize_e4m3_v2, 2)
SAMSTREAM_QUANTIZE_E4M3(samstream_quantize_e4m3_v3, 3)
SAMSTREAM_QUANTIZE_E4M3(samstream_quantize_e4m3_v4, 4)
SAMSTREAM_QUANTIZE_E4M3(samstream_quantize_e4m3_v5, 5)
SAMSTREAM_QUANTIZE_E4M3(samstream_quantize_e4m3_v8, 8)
SAMSTREAM_QUANTIZE_E4M3(samstream_quantize_e4m3_v12, 12)
SAMSTREAM_QUANTIZE_E4M3(samstream_quantize_e4m3_v16, 16)
SAMSTREAM_QUANTIZE_E4M3(samstream_quantize_e4m3_v20, 20)
#define SAMSTREAM_LAYERNORM_E4M3(NAME, VEC)                                                                 \
    extern "C" __global__ void __launch_bounds__(256) NAME(const bf16* x, const bf16* gamma, const bf16* beta, \
                                                           uint8_t* q, float* scale, int rows, int C,       \
                                                           float eps) {                                     \
        fp8_quant::layernorm_e4m3<VEC>(x, gamma, beta, q, scale, rows, C, eps);                             \
    }
SAMSTREAM_LAYERNORM_E4M3(samstream_layernorm_e4m3_v1, 1)
SAMSTREAM_LAYERNORM_E4M3(samstream_layernorm_e4m3_v2, 2)
SAMSTREAM_LAYERNORM_E4M3(samstream_layernorm_e4m3_v3, 3)
SAMSTREAM_LAYERNORM_E4M3(samstream_layernorm_e4m3_v4, 4)
SAMSTREAM_LAYERNORM_E4M3(samstream_layernorm_e4m3_v5, 5)

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

// Hopper attention (attention_sm90.cuh), head dim 64, wgmma for both products, the default on sm_90.
// Global: producer warpgroup + 3 consumer warpgroups of 64 queries (192 per CTA); grid x = query blocks, y = heads,
// z = images.
extern "C" __global__ void __launch_bounds__(attention_sm90::Config::THREADS, 1) samstream_attention_sm90_hd64(
    const bf16* qkv, const bf16* rel_h, const bf16* rel_w, bf16* out, int H, int W, int heads, float scale) {
    attention_sm90::attention_fwd_sm90(qkv, rel_h, rel_w, out, H, W, heads, scale);
}
SAMSTREAM_SMEM(samstream_attention_sm90_hd64, attention_sm90::Config::SMEM_BYTES)
// Windowed (9 to 16 tokens a side), half a window per CTA (attention_sm90::WindowHalves): 2 consumer warpgroups of 64
// queries, no producer (the window's K / V loaded in the prologue), two CTAs per SM; grid x = ceil(window^2 / 128),
// y = heads, z = images x windows.
extern "C" __global__ void __launch_bounds__(attention_sm90::WindowHalves::THREADS, attention_sm90::WindowHalves::CTAS_PER_SM)
    samstream_attention_sm90w2_hd64(const bf16* qkv, const bf16* qkv_bias, const bf16* rel_h, const bf16* rel_w,
                                    bf16* out, int H, int W, int heads, int window, float scale) {
    attention_sm90::attention_window_halves_sm90(qkv, qkv_bias, rel_h, rel_w, out, H, W, heads, window, scale);
}
SAMSTREAM_SMEM(samstream_attention_sm90w2_hd64, attention_sm90::WindowHalves::SMEM_BYTES)

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
                                                                           int W, int C, int stride) {
    encoder_ops::im2col3x3_bf16(x, rows, B, H, W, C, stride);
}

extern "C" __global__ void __launch_bounds__(256) samstream_convt2x2_scatter_bf16(const bf16* y, bf16* out, int B,
                                                                                 int H, int W, int C) {
    encoder_ops::convt2x2_scatter_bf16(y, out, B, H, W, C);
}

// Block (32, 8), grid (ceil(T/32), ceil(C/32), B).
extern "C" __global__ void __launch_bounds__(256) samstream_tokens_to_chw_f32(const bf16* y, float* out, int T,
                                                                              int C) {
    encoder_ops::tokens_to_chw_f32(y, out, T, C);
}

// ---- prompt encoder and mask decoder (decoder_ops.cuh); grid-stride loops, 256 threads unless stated ------
extern "C" __global__ void __launch_bounds__(256) samstream_dec_prompt_tokens(
    const float* coords, const int* codes, const float* out_tokens, const float* gauss, const float* point_embed,
    const float* not_a_point, float* tokens, int P, int mt, int ns, int C) {
    decoder_ops::prompt_tokens(coords, codes, out_tokens, gauss, point_embed, not_a_point, tokens, P, mt, ns, C);
}

extern "C" __global__ void __launch_bounds__(256) samstream_dec_dense_pe(const float* gauss, bf16* pe, int E, int C) {
    decoder_ops::dense_pe(gauss, pe, E, C);
}

// Block (32, 8), grid (ceil(T/32), ceil(C/32), P).
extern "C" __global__ void __launch_bounds__(256) samstream_dec_embed_keys(const float* emb, const float* no_mask,
                                                                           bf16* keys, int T, int C) {
    decoder_ops::embed_keys(emb, no_mask, keys, T, C);
}

extern "C" __global__ void __launch_bounds__(256) samstream_dec_mask_keys(
    const float* emb, const float* masks, const int* mask_slot, const float* w1, const float* b1, const float* g1,
    const float* be1, const float* w2, const float* b2, const float* g2, const float* be2, const float* w3,
    const float* b3, bf16* keys, int P, int E, int C, int MI, float eps) {
    decoder_ops::mask_keys(emb, masks, mask_slot, w1, b1, g1, be1, w2, b2, g2, be2, w3, b3, keys, P, E, C, MI, eps);
}

extern "C" __global__ void __launch_bounds__(256) samstream_dec_add_periodic_to_bf16(const bf16* x, const bf16* add,
                                                                                    bf16* y, long long total,
                                                                                    long long period) {
    decoder_ops::add_periodic_to_bf16(x, add, y, total, period);
}

extern "C" __global__ void __launch_bounds__(256) samstream_dec_add_f32(const float* a, const float* b, float* y,
                                                                       long long n) {
    decoder_ops::add_f32(a, b, y, n);
}

// Block 256 (8 warps), grid ceil(N x ceil(M / LR) / 8): one warp per output column and LR rows.
extern "C" __global__ void __launch_bounds__(256) samstream_dec_linear_f32(const float* X, int ldx, const float* W,
                                                                          const float* bias, const float* R, float* Y,
                                                                          int ldy, int M, int N, int K, int relu) {
    decoder_ops::linear_f32(X, ldx, W, bias, R, Y, ldy, M, N, K, relu);
}

// One warp per row, 8 rows per CTA.
extern "C" __global__ void __launch_bounds__(256) samstream_dec_layernorm_f32(const float* x, const float* g,
                                                                             const float* b, float* y, int rows,
                                                                             int C, float eps) {
    decoder_ops::layernorm_f32(x, g, b, y, rows, C, eps);
}

// Attention: "warp" one CTA of 8 warps per (set, head, query), the keys split over them; "thread" one thread per
// (set, head, query).
// Suffix: head-dim bound, then the types of q, k / v, out (f: fp32, h: bf16).
#define SAMSTREAM_DEC_ATTN(KIND, HD, TQ, TK, TO, SUFFIX)                                                       \
    extern "C" __global__ void __launch_bounds__(256) samstream_dec_attn_##KIND##_hd##HD##_##SUFFIX(           \
        const TQ* Q, int ldq, const TK* K, int ldk, const TK* V, int ldv, TO* O, int ldo, int B, int nq, int nk, \
        int heads, int hd, float divisor) {                                                                   \
        decoder_ops::attention_##KIND<HD, TQ, TK, TO>(Q, ldq, K, ldk, V, ldv, O, ldo, B, nq, nk, heads, hd,     \
                                                      divisor);                                               \
    }
#define SAMSTREAM_DEC_ATTN_ALL(HD)                          \
    SAMSTREAM_DEC_ATTN(warp, HD, float, bf16, float, fhf)   \
    SAMSTREAM_DEC_ATTN(thread, HD, float, float, float, fff) \
    SAMSTREAM_DEC_ATTN(thread, HD, bf16, float, bf16, hfh)
SAMSTREAM_DEC_ATTN_ALL(16)
SAMSTREAM_DEC_ATTN_ALL(32)
SAMSTREAM_DEC_ATTN_ALL(64)
// Vector-load variants for hd == HD exactly (16-byte aligned rows); no hd argument.
#define SAMSTREAM_DEC_ATTN_VEC(KIND, HD, TQ, TK, TO, SUFFIX)                                                     \
    extern "C" __global__ void __launch_bounds__(256) samstream_dec_attn_vec_##KIND##_hd##HD##_##SUFFIX(         \
        const TQ* Q, int ldq, const TK* K, int ldk, const TK* V, int ldv, TO* O, int ldo, int B, int nq, int nk, \
        int heads, float divisor) {                                                                           \
        decoder_ops::attention_##KIND##_vec<HD, TQ, TK, TO>(Q, ldq, K, ldk, V, ldv, O, ldo, B, nq, nk, heads,   \
                                                            divisor);                                         \
    }
#define SAMSTREAM_DEC_ATTN_VEC_ALL(HD)                          \
    SAMSTREAM_DEC_ATTN_VEC(warp, HD, float, bf16, float, fhf)   \
    SAMSTREAM_DEC_ATTN_VEC(thread, HD, float, float, float, fff) \
    SAMSTREAM_DEC_ATTN_VEC(thread, HD, bf16, float, bf16, hfh)
SAMSTREAM_DEC_ATTN_VEC_ALL(16)
SAMSTREAM_DEC_ATTN_VEC_ALL(32)
SAMSTREAM_DEC_ATTN_VEC_ALL(64)

// One warp per output pixel, 8 per CTA. skip / frame_of_set: SAM 2's high-resolution features (nullptr for SAM).
extern "C" __global__ void __launch_bounds__(256) samstream_dec_upscale_ln_gelu(const bf16* pp, const bf16* g,
                                                                               const bf16* b, bf16* y, int B, int H,
                                                                               int W, int Co, float eps,
                                                                               const bf16* skip,
                                                                               const int* frame_of_set, int frames) {
    decoder_ops::upscale_ln_gelu(pp, g, b, y, B, H, W, Co, eps, skip, frame_of_set, frames);
}

// skip / frame_of_set: SAM 2's high-resolution features, added with GELU on read (nullptr for SAM); one branch
// between two instances (decoder_ops.cuh says why).
extern "C" __global__ void __launch_bounds__(256) samstream_dec_mask_logits(const bf16* pp, const float* hyper,
                                                                           float* masks, int P, int E, int Co, int mt,
                                                                           int first, int count, const bf16* skip,
                                                                           const int* frame_of_set, int frames) {
    if (skip == nullptr)
        decoder_ops::mask_logits<false>(pp, hyper, masks, P, E, Co, mt, first, count, nullptr, nullptr, 0);
    else
        decoder_ops::mask_logits<true>(pp, hyper, masks, P, E, Co, mt, first, count, skip, frame_of_set, frames);
}

// ---- SAM 2.1's decoder output selection (sam2_decoder_ops.cuh) ------------------------------------------
#include "sam2_decoder_ops.cuh"

// One block of 256 per set.
extern "C" __global__ void __launch_bounds__(256) samstream_sam2_dec_select(
    const float* masks, const float* iou_raw, const float* tokens, int nq, int C, int plane, int multimask,
    float delta, float thresh, int* chosen, float* ious, float* ptr_tokens) {
    sam2_decoder_ops::select(masks, iou_raw, tokens, nq, C, plane, multimask, delta, thresh, chosen, ious, ptr_tokens);
}

// Grid-stride loop, 256 threads.
extern "C" __global__ void __launch_bounds__(256) samstream_sam2_dec_finalize(
    const float* masks, const int* chosen, const float* scores, const float* ptr_mlp, const float* no_obj_ptr,
    float* low_res, bf16* pointers, int P, int plane, int C, float no_object) {
    sam2_decoder_ops::finalize(masks, chosen, scores, ptr_mlp, no_obj_ptr, low_res, pointers, P, plane, C, no_object);
}

// ---- pre- and post-processing (image_ops.cuh); grid-stride loops, 256 threads ------------------------
#include "image_ops.cuh"

extern "C" __global__ void __launch_bounds__(256) samstream_pillow_pass_u8(
    const uint8_t* src, uint8_t* dst, int in_w, int out_w, int out_h, int horizontal, int first_row,
    const int* bounds, const int* weights, int ksize) {
    image_ops::pillow_pass_u8(src, dst, in_w, out_w, out_h, horizontal, first_row, bounds, weights, ksize);
}

extern "C" __global__ void __launch_bounds__(256) samstream_pillow_pass_normalize_f32(
    const uint8_t* src, float* out, int in_w, int w, int h, int S, int horizontal, int first_row,
    const int* bounds, const int* weights, int ksize, float mean0, float mean1, float mean2, float std0,
    float std1, float std2) {
    image_ops::pillow_pass_normalize_f32<false>(src, out, in_w, w, h, S, horizontal, first_row, bounds, weights,
                                                ksize, 1.f, mean0, mean1, mean2, std0, std1, std2);
}

// SAM 3's input: ((u / scale) - mean) / std, the CPU's three roundings (Sam3Preprocessor).
extern "C" __global__ void __launch_bounds__(256) samstream_pillow_pass_scale_normalize_f32(
    const uint8_t* src, float* out, int in_w, int w, int h, int S, int horizontal, int first_row,
    const int* bounds, const int* weights, int ksize, float scale, float mean0, float mean1, float mean2,
    float std0, float std1, float std2) {
    image_ops::pillow_pass_normalize_f32<true>(src, out, in_w, w, h, S, horizontal, first_row, bounds, weights,
                                               ksize, scale, mean0, mean1, mean2, std0, std1, std2);
}

extern "C" __global__ void __launch_bounds__(256) samstream_yuv_to_rgb8(
    const uint8_t* luma, int luma_pitch, const uint8_t* cb, const uint8_t* cr, int chroma_pitch, int chroma_step,
    int w, int h, int sixteen, float kr, float kb, int full, uint8_t* rgb) {
    image_ops::yuv_to_rgb8(luma, luma_pitch, cb, cr, chroma_pitch, chroma_step, w, h, sixteen, kr, kb, full, rgb);
}

// Grid (CTAs per mask, masks); 256 threads.
extern "C" __global__ void __launch_bounds__(256) samstream_mask_postprocess(
    const float* logits, int Lh, int Lw, int S, int hr, int wr, int H, int W, int words_per_mask, uint32_t* bits,
    uint32_t* stats) {
    image_ops::mask_postprocess(logits, Lh, Lw, S, hr, wr, H, W, words_per_mask, bits, stats);
}

// ---- appearance pooling for the tracker (pool_ops.cuh); one block of 256 threads per request --------------
#include "pool_ops.cuh"

// embeddings: one device address per request (the slot it reads); weights [n, side*side]; bounds [n, 4];
// out [n, channels].
extern "C" __global__ void __launch_bounds__(256) samstream_pool_embedding(
    const unsigned long long* embeddings, const float* weights, const int* bounds, float* out, int side,
    int channels) {
    const int j = blockIdx.x;
    pool_ops::pool_mean(reinterpret_cast<const __nv_bfloat16*>(embeddings[j]), weights + (size_t) j * side * side,
                        bounds + 4 * j, out + (size_t) j * channels, side, channels);
}

// ---- camera motion for the tracker (match_ops.cuh); one block of 256 threads per shift ----------------------
#include "match_ops.cuh"

// prev, now: bf16 [side*side, channels]; scores [(2 range + 1)^2].
extern "C" __global__ void __launch_bounds__(256) samstream_match_shifts(
    const __nv_bfloat16* prev, const __nv_bfloat16* now, float* scores, int side, int channels, int cols, int rows,
    int range) {
    match_ops::shift_score(prev, now, scores, side, channels, cols, rows, range);
}

// ---- appearance maps for the tracker's search for lost objects (appearance_ops.cuh); 256 threads, one warp per
// cell: grid (ceil(side*side / 8), requests) ----------------------------------------------------------------------
#include "appearance_ops.cuh"

// embeddings: one device address per request (the slot it reads); refs [n, 2, channels] (look, then mean);
// dims [n, 4] (cols, rows, wc, wr); out [n, side*side] (request j's map at j * side*side, [rows * cols]).
extern "C" __global__ void __launch_bounds__(256) samstream_cell_similarity(
    const unsigned long long* embeddings, const float* refs, const int* dims, float* out, int side, int channels) {
    const int j = blockIdx.y;
    const float* look = refs + (size_t) j * 2 * channels;
    appearance_ops::cell_similarity(reinterpret_cast<const __nv_bfloat16*>(embeddings[j]), look, look + channels,
                                    dims + 4 * j, out + (size_t) j * side * side, side, channels);
}

// ---- LaunchTimer's hold: keeps the stream busy for about `ns` nanoseconds so that the launches it times queue up behind
// it and their event pairs measure the GPU's time, not the host's launch latency. One thread.
extern "C" __global__ void __launch_bounds__(32) samstream_hold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(10000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

// ---- SAM 2 (Sam2Kernels): plain attention (sdpa.cuh) and Hiera / FPN data movement (hiera_ops.cuh) ---------------
#include "hiera_ops.cuh"
#include "sdpa.cuh"
#include "sdpa_sm90.cuh"

// Grid (ceil(nq / 64), heads, batches), 128 threads, sdpa::smem_bytes(HD, 4, BKV) of dynamic shared memory. One kernel
// per head-dim ceiling: 64 (base+'s 56, 64), 96 (tiny / small: 96; large: 72), 128, 256 (the memory attention's one
// head of 256, on key tiles of 32).
#define SAMSTREAM_SDPA(HD, BKV)                                                                                   \
    extern "C" __global__ void __launch_bounds__(128) samstream_sdpa_hd##HD(                                     \
        const bf16* q, int q_ld, long long q_batch, const bf16* k, int k_ld, long long k_batch, const bf16* v,  \
        int v_ld, long long v_batch, bf16* o, int o_ld, long long o_batch, int nq, int nk, int hd, float scale,  \
        int splits, float* part_o, float2* part_ml) {                                                          \
        sdpa::sdpa_fwd<HD, 4, BKV>(sdpa::Rows{q, q_ld, q_batch}, sdpa::Rows{k, k_ld, k_batch},                  \
                                   sdpa::Rows{v, v_ld, v_batch}, o, o_ld, o_batch, nq, nk, hd, scale, splits,   \
                                   part_o, part_ml);                                                            \
    }                                                                                                           \
    SAMSTREAM_SMEM(samstream_sdpa_hd##HD, (sdpa::smem_bytes(HD, 4, BKV)))
SAMSTREAM_SDPA(64, 64)
SAMSTREAM_SDPA(96, 64)
SAMSTREAM_SDPA(128, 64)
SAMSTREAM_SDPA(256, 32)
// Hopper attention at head dim 256 (sdpa_sm90.cuh): the memory attention's head on sm_90. Grid (ceil(nq / 128) x
// splits, heads, batches), 384 threads (a producer and 2 consumer warpgroups), sdpa_sm90::Config::SMEM_BYTES.
extern "C" __global__ void __launch_bounds__(sdpa_sm90::Config::THREADS, 1) samstream_sdpa_sm90_hd256(
    const bf16* q, int q_ld, long long q_batch, const bf16* k, int k_ld, long long k_batch, const bf16* v, int v_ld,
    long long v_batch, bf16* o, int o_ld, long long o_batch, int nq, int nk, float scale, int splits, float* part_o,
    float2* part_ml) {
    sdpa_sm90::sdpa_fwd_sm90(sdpa::Rows{q, q_ld, q_batch}, sdpa::Rows{k, k_ld, k_batch}, sdpa::Rows{v, v_ld, v_batch},
                             o, o_ld, o_batch, nq, nk, scale, splits, part_o, part_ml);
}
SAMSTREAM_SMEM(samstream_sdpa_sm90_hd256, sdpa_sm90::Config::SMEM_BYTES)
// The key splits' merge (sdpa::combine); grid-stride, 256 threads.
extern "C" __global__ void __launch_bounds__(256) samstream_sdpa_combine(const float* part_o, const float2* part_ml,
                                                                         bf16* o, int o_ld, long long o_batch,
                                                                         int batches, int heads, int nq, int hd,
                                                                         int splits) {
    sdpa::combine(part_o, part_ml, o, o_ld, o_batch, batches, heads, nq, hd, splits);
}

extern "C" __global__ void __launch_bounds__(256) samstream_hiera_unfold_f32(const float* img, bf16* rows, int B,
                                                                             int Cin, int H, int W, int K, int stride,
                                                                             int pad, int OH, int OW, int kcols) {
    hiera_ops::unfold_f32(img, rows, B, Cin, H, W, K, stride, pad, OH, OW, kcols);
}
extern "C" __global__ void __launch_bounds__(256) samstream_hiera_window_partition(const bf16* x, bf16* win, int B,
                                                                                   int H, int W, int C, int ws) {
    hiera_ops::window_partition(x, win, B, H, W, C, ws);
}
extern "C" __global__ void __launch_bounds__(256) samstream_hiera_window_unpartition_add(
    const bf16* a, bf16* x, int B, int OH, int OW, int C, int qs, int nwh, int nww) {
    hiera_ops::window_unpartition_add(a, x, B, OH, OW, C, qs, nwh, nww);
}
extern "C" __global__ void __launch_bounds__(256) samstream_hiera_maxpool2x2(const bf16* src, int src_ld,
                                                                             long long src_batch, bf16* dst, int N,
                                                                             int H, int W, int C) {
    hiera_ops::maxpool2x2(src, src_ld, src_batch, dst, N, H, W, C);
}
extern "C" __global__ void __launch_bounds__(256) samstream_fpn_upsample2x_add(const bf16* y, bf16* x, int B, int h,
                                                                               int w, int C) {
    hiera_ops::upsample2x_add(y, x, B, h, w, C);
}

// ---- SAM 2's memory attention element-wise kernels (memory_ops.cuh); grid-stride loops, 256 threads ---------------
#include "memory_ops.cuh"

extern "C" __global__ void __launch_bounds__(256) samstream_mem_rope(bf16* x, int ld, int rows, int heads, int hd,
                                                                     const float* cos_t, const float* sin_t,
                                                                     int tokens) {
    memory_ops::rope(x, ld, rows, heads, hd, cos_t, sin_t, tokens);
}
extern "C" __global__ void __launch_bounds__(256) samstream_mem_relu(bf16* x, long long n) { memory_ops::relu(x, n); }
extern "C" __global__ void __launch_bounds__(256) samstream_mem_add(const bf16* a, const bf16* b, bf16* y,
                                                                    long long n) {
    memory_ops::add(a, b, y, n);
}

// ---- SAM 2's memory encoder (memory_encoder_ops.cuh); grid-stride loops, 256 threads ------------------------------
#include "memory_encoder_ops.cuh"

extern "C" __global__ void __launch_bounds__(256) samstream_menc_scaled_mask(const float* logits, int binarize, float* out,
                                                                             int B, int l, int S) {
    memory_encoder_ops::scaled_mask(logits, binarize, out, B, l, S);
}
extern "C" __global__ void __launch_bounds__(256) samstream_menc_shrinkage_count(const float* logits, int n, int l,
                                                                                int S, int* counts) {
    memory_encoder_ops::shrinkage_count(logits, n, l, S, counts);
}
extern "C" __global__ void __launch_bounds__(256) samstream_menc_scaled_mask_shrunk(const float* logits, int k, int l,
                                                                                   int S, const int* counts,
                                                                                   float threshold, float* out,
                                                                                   float* presence) {
    memory_encoder_ops::scaled_mask_shrunk(logits, k, l, S, counts, threshold, out, presence);
}
extern "C" __global__ void __launch_bounds__(256) samstream_menc_conv3x3_s2(const float* x, const float* w,
                                                                            const float* bias, float* y, int B, int H,
                                                                            int W, int Cin, int Cout) {
    memory_encoder_ops::conv3x3_s2(x, w, bias, y, B, H, W, Cin, Cout);
}
extern "C" __global__ void __launch_bounds__(256) samstream_menc_layernorm_gelu(float* x, const float* g,
                                                                                const float* beta, bf16* out_bf16,
                                                                                long long pixels, int C, float eps) {
    memory_encoder_ops::layernorm_gelu<float>(x, g, beta, out_bf16, pixels, C, eps);
}
extern "C" __global__ void __launch_bounds__(256) samstream_menc_layernorm_gelu_bf16(bf16* x, const float* g,
                                                                                     const float* beta, bf16* out_bf16,
                                                                                     long long pixels, int C,
                                                                                     float eps) {
    memory_encoder_ops::layernorm_gelu<bf16>(x, g, beta, out_bf16, pixels, C, eps);
}
extern "C" __global__ void __launch_bounds__(256) samstream_menc_depthwise(const bf16* x, const float* w,
                                                                           const float* bias, bf16* y, int B, int H,
                                                                           int W, int C, int K) {
    memory_encoder_ops::depthwise(x, w, bias, y, B, H, W, C, K);
}

// ---- SAM 2's video step (sam2_step_ops.cuh): copy table, no-object embedding, RGB input; 256 threads -------------
#include "sam2_step_ops.cuh"

extern "C" __global__ void __launch_bounds__(256) samstream_step_copy_spans(const sam2_step_ops::Span* spans, int n) {
    sam2_step_ops::copy_spans(spans, n);
}
extern "C" __global__ void __launch_bounds__(256) samstream_step_no_object(bf16* mem, const bf16* no_obj,
                                                                           const float* scores, int B, long long per,
                                                                           int memDim) {
    sam2_step_ops::no_object_where_absent(mem, no_obj, scores, B, per, memDim);
}
extern "C" __global__ void __launch_bounds__(256) samstream_step_normalize_rgb8(const uint8_t* rgb, float* out, int B,
                                                                                int S) {
    sam2_step_ops::normalize_rgb8(rgb, out, B, S);
}
