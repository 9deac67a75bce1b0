/**
 * SAM 3's image model (Meta's {@code sam3}: concept prompts - a noun phrase, optionally exemplar boxes - find every
 * instance) in fp32 on the CPU: {@link io.samstream.gpu.sam3.Sam3Model} (weights, forward passes) and the
 * processor-style facade {@link io.samstream.gpu.sam3.Sam3Image} (image + phrase to instances and presence).
 *
 * <p>One part per file, as in Meta's {@code sam3/model}: image {@code Vit}, {@code VitBlock}, {@code DualNeck};
 * text {@code TextEncoder} (tokenizer in {@code io.samstream.gpu.sam3.text}); prompts {@code GeometryEncoder} with
 * {@code RoiAlign}; detector {@code FusionEncoder} over {@code EncoderLayer}, {@code DetrDecoder} over
 * {@code DecoderLayer} with {@code BoxRelativeBias} and {@code SineEmbedding}, {@code DotProductScoring};
 * {@code MaskHead}; helpers {@code Attention} (torch's MultiheadAttention with bias, causal and padding masks),
 * {@code Sam3Preprocessor}. Configuration: {@code Sam3Config}, {@code Sam3ConfigInference},
 * {@code Sam3Checkpoint} (the detector's keys of sam3.pt).
 *
 * <p>Layout and numerics follow {@code io.samstream.gpu.cpu} and {@code io.samstream.gpu.sam2}, whose GEMM,
 * LayerNorm, convolutions, attention, resampling and rotary encoding are reused: channels-last {@code float[]}, fp32
 * with normalization statistics and softmax sums in double. The tracker half of sam3.pt (SAM 2's memory design) is
 * not read here yet.
 */
package io.samstream.gpu.sam3;
