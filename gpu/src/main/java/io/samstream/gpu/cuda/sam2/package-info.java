/**
 * SAM 2.1 on the GPU, one part per class as in Meta's {@code sam2/modeling} and the CPU model of
 * {@code io.samstream.gpu.sam2}: the image encoder ({@link io.samstream.gpu.cuda.sam2.CudaHiera} and its FPN neck in
 * {@link io.samstream.gpu.cuda.sam2.CudaSam2ImageEncoder}), the memory attention
 * ({@link io.samstream.gpu.cuda.sam2.CudaMemoryAttention}), the prompt encoder and mask decoder
 * ({@link io.samstream.gpu.cuda.sam2.CudaSam2MaskDecoder}, SAM's two-way transformer from {@code cuda.blocks}) and
 * the memory encoder ({@link io.samstream.gpu.cuda.sam2.CudaMemoryEncoder}). The video tracker
 * ({@link io.samstream.gpu.cuda.sam2.CudaSam2Tracker}) runs the whole step with them; the offload
 * ({@link io.samstream.gpu.cuda.sam2.CudaSam2Offload}) puts three of them behind the CPU model's seam.
 *
 * <p>Builds on {@code cuda}, {@code cuda.kernels} and {@code cuda.blocks}; never imports SAM's parts
 * ({@code cuda.sam}).
 */
package io.samstream.gpu.cuda.sam2;
