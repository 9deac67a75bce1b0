/**
 * SAM 3 on the GPU, one part per class as in the CPU model of {@code io.samstream.gpu.sam3}: so far the image trunk
 * ({@link io.samstream.gpu.cuda.sam3.CudaSam3Vit}, the ViT) and the fusion encoder
 * ({@link io.samstream.gpu.cuda.sam3.CudaSam3FusionEncoder}), both owned by
 * {@link io.samstream.gpu.cuda.sam3.CudaSam3} (one context, stream, staging and pool), which the CPU model runs
 * through its {@link io.samstream.gpu.sam3.Sam3Backend} seam. {@link io.samstream.gpu.cuda.sam3.Sam3GpuPreprocessor}
 * makes the trunk's input from an 8-bit RGB image on the GPU (the CPU's {@code Sam3Preprocessor}, bit for bit).
 *
 * <p>Builds on {@code cuda} and {@code cuda.kernels}; never imports SAM's or SAM 2's GPU parts.
 */
package io.samstream.gpu.cuda.sam3;
