/**
 * SAM 2.1 (Meta's {@code sam2}, video) in fp32 on the CPU, in streaming form: {@link io.samstream.gpu.sam2.Sam2Model}
 * (weights, the forward passes) and {@link io.samstream.gpu.sam2.Sam2VideoTracker} (frames one at a time, a
 * bounded {@link io.samstream.gpu.sam2.MemoryBank} per object).
 *
 * <p>One part per file, as in Meta's {@code sam2/modeling}: image encoder {@code Hiera}, {@code HieraBlock},
 * {@code FpnNeck}, {@code Sam2ImageEncoder}; {@code Sam2PromptEncoder}; {@code Sam2MaskDecoder}; memory
 * {@code MemoryEncoder}, {@code CxBlock}, {@code MemoryAttention}, {@code RopeAttention},
 * {@code RotaryEncoding}; helpers {@code Sdpa} (attention), {@code Resampling} (bicubic, bilinear, nearest,
 * max pooling as torch computes them), {@code PositionEncodings} (sine). Configuration:
 * {@code Sam2Config}, {@code Sam2ConfigInference}.
 *
 * <p>Layout and numerics follow {@code io.samstream.gpu.cpu}, whose GEMM, LayerNorm, two-way transformer
 * blocks and thread pool are reused: channels-last {@code float[]}, fp32 with LayerNorm statistics and softmax
 * sums in double; memory features are rounded to bf16 when stored, as the reference predictor stores them.
 */
package io.samstream.gpu.sam2;
