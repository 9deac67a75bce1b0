/**
 * SAM 3 on the GPU, one part per class as in the CPU model of {@code io.samstream.gpu.sam3}: the image trunk
 * ({@link io.samstream.gpu.cuda.sam3.CudaSam3Vit}, the ViT), the necks ({@link io.samstream.gpu.cuda.sam3.CudaSam3Neck}),
 * the fusion encoder ({@link io.samstream.gpu.cuda.sam3.CudaSam3FusionEncoder}), the DETR decoder
 * ({@link io.samstream.gpu.cuda.sam3.CudaSam3Decoder}) and the mask head
 * ({@link io.samstream.gpu.cuda.sam3.CudaSam3MaskHead}), all owned by {@link io.samstream.gpu.cuda.sam3.CudaSam3} (one
 * context, stream, staging and pool, an image's features kept in {@link io.samstream.gpu.cuda.sam3.FeatureRing}
 * slots), which the CPU model runs through its {@link io.samstream.gpu.sam3.Sam3Backend} seam.
 * {@link io.samstream.gpu.cuda.sam3.Sam3GpuPreprocessor} makes the trunk's input from an 8-bit RGB image on the GPU
 * (the CPU's {@code Sam3Preprocessor}, bit for bit). The tracker's passes
 * ({@link io.samstream.gpu.cuda.sam3.CudaSam3Tracker}, memories in a device bank of
 * {@link io.samstream.gpu.cuda.sam3.MemorySlots}) are SAM 2.1's GPU parts under SAM 3's weights.
 *
 * <p>Builds on {@code cuda}, {@code cuda.kernels} and, for the tracker, SAM 2's GPU parts ({@code cuda.sam2});
 * never imports SAM's.
 */
package io.samstream.gpu.cuda.sam3;
