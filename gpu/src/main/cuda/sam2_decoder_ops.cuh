// SAM 2.1's mask decoder output selection on the device (CudaSam2MaskDecoder), so that a whole decoder step is
// one CUDA graph with no host round trip. Reference: Sam2MaskDecoder.decode + Sam2Model.heads.
//
// Inputs per set p of P: the four masks fp32 [P, 4, L*L] (mask tokens 0..3), the IoU head's raw outputs fp32
// [P, 4], the object score fp32 [P], the decoder's output tokens fp32 [P, nq, C] (row 0 object score, 1 IoU,
// 2..5 mask tokens).
//  - multimask: the best-IoU mask of 1..3; its token is the pointer token.
//  - single mask: mask 0, unless its stability count(logit > delta) / count(logit > -delta) is below thresh
//    (1 when nothing is above -delta), then the best-IoU mask of 1..3; the pointer token stays token 0.
// Ties go to the lower index (the reference's argmax). Then, where the score is not > 0 the low-res mask is
// filled with no_object and the pointer is no_obj_ptr, else it is obj_ptr_proj of the chosen token (run
// between the two kernels on the fp32 Linear).
#pragma once

#include "common.cuh"

namespace sam2_decoder_ops {

// One block per set: stability of mask 0 (single-mask mode), the choice, its sigmoid IoU, the pointer token.
// chosen int [P], ious fp32 [P], ptr_tokens fp32 [P, C].
__device__ __forceinline__ void select(const float* __restrict__ masks, const float* __restrict__ iou_raw,
                                       const float* __restrict__ tokens, int nq, int C, int plane, int multimask,
                                       float delta, float thresh, int* __restrict__ chosen, float* __restrict__ ious,
                                       float* __restrict__ ptr_tokens) {
    __shared__ int counts[2][32];
    __shared__ int token;
    const int p = blockIdx.x;
    int inter = 0, uni = 0;
    if (!multimask) {
        const float* m0 = masks + (size_t)p * 4 * plane;
        for (int i = threadIdx.x; i < plane; i += blockDim.x) {
            const float v = m0[i];
            inter += v > delta;
            uni += v > -delta;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            inter += __shfl_xor_sync(0xffffffffu, inter, o);
            uni += __shfl_xor_sync(0xffffffffu, uni, o);
        }
        if ((threadIdx.x & 31) == 0) {
            counts[0][threadIdx.x >> 5] = inter;
            counts[1][threadIdx.x >> 5] = uni;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        float iou[4];
        for (int k = 0; k < 4; ++k) iou[k] = 1.f / (1.f + expf(-iou_raw[p * 4 + k]));
        int best = 1;
        for (int k = 2; k < 4; ++k)
            if (iou[k] > iou[best]) best = k;
        int pick = best, tok = best;
        if (!multimask) {
            int in = 0, un = 0;
            for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
                in += counts[0][w];
                un += counts[1][w];
            }
            const float stability = un > 0 ? (float)in / (float)un : 1.f;
            pick = stability >= thresh ? 0 : best;
            tok = 0;
        }
        chosen[p] = pick;
        ious[p] = iou[pick];
        token = tok;
    }
    __syncthreads();
    const float* src = tokens + ((size_t)p * nq + 2 + token) * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) ptr_tokens[(size_t)p * C + c] = src[c];
}

// Grid-stride over P * plane mask values then P * C pointer values: low_res fp32 [P, plane] = the chosen mask
// or no_object; pointers bf16 [P, C] = ptr_mlp (obj_ptr_proj of the chosen token) or no_obj_ptr [C].
__device__ __forceinline__ void finalize(const float* __restrict__ masks, const int* __restrict__ chosen,
                                         const float* __restrict__ scores, const float* __restrict__ ptr_mlp,
                                         const float* __restrict__ no_obj_ptr, float* __restrict__ low_res,
                                         bf16* __restrict__ pointers, int P, int plane, int C, float no_object) {
    const long long nm = (long long)P * plane, total = nm + (long long)P * C;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        if (i < nm) {
            const int p = (int)(i / plane);
            const long long px = i - (long long)p * plane;
            low_res[i] = scores[p] > 0.f ? masks[((size_t)p * 4 + chosen[p]) * plane + px] : no_object;
        } else {
            const long long j = i - nm;
            const int p = (int)(j / C), c = (int)(j % C);
            pointers[j] = __float2bfloat16_rn(scores[p] > 0.f ? ptr_mlp[j] : no_obj_ptr[c]);
        }
    }
}

}  // namespace sam2_decoder_ops
