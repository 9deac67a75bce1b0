/**
 * The CPU fp32 reference backend: {@link io.samstream.gpu.cpu.CpuSamBackend}, a step-by-step port of Meta's
 * segment-anything forward pass, used as ground truth for the CUDA backend and as the fallback without a GPU.
 *
 * <p>Layout: activations are plain row-major {@code float[]}; token grids are channels-last ([h*w, C], the
 * reference's [B, H, W, C]); convolutions are im2col + GEMM on channels-last data. Weights are read once at
 * construction (shape-checked through {@code StateDict.get(key, shape)}) and re-laid-out for the GEMM
 * ({@link io.samstream.gpu.cpu.PackedMatrix}).
 *
 * <p>Numerics: fp32 storage and fp32 GEMM accumulation as in PyTorch; LayerNorm statistics, softmax sums,
 * sin/cos and erf in double, rounded once. Every epsilon, activation (exact erf GELU, ReLU in the decoder's
 * MLPs) and order of additions follows the reference modules.
 *
 * <p>Threads: one {@link io.samstream.gpu.cpu.CpuThreadPool} per backend; GEMMs split over (row block,
 * column panel), attention over (window, head, query block). Task sizes are fixed, so results are
 * bit-identical for any thread count. Attention never holds more than a [64, tokens] score block per thread.
 *
 * <p>Classes, one job each: {@code CpuOps} (LayerNorm, GELU, ReLU, softmax), {@code Erf}, {@code Gemm} /
 * {@code PackedMatrix} / {@code Linear}, {@code Conv2d}, {@code ConvTranspose2x2}, {@code LayerNorm};
 * image encoder: {@code ImageEncoderCpu}, {@code EncoderBlock}, {@code EncoderAttention}, {@code WindowGrid},
 * {@code RelativePosition}; prompt encoder: {@code PromptEncoderCpu}, {@code PositionEmbeddingRandom};
 * mask decoder: {@code MaskDecoderCpu}, {@code TwoWayBlock}, {@code DecoderAttention}, {@code Mlp}.
 */
package io.samstream.gpu.cpu;
