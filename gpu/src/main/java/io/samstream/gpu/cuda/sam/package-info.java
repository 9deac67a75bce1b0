/**
 * SAM on the GPU, one part per class as in Meta's {@code segment_anything/modeling}: the image encoder
 * ({@link io.samstream.gpu.cuda.sam.CudaImageEncoder}), the prompt encoder and mask decoder
 * ({@link io.samstream.gpu.cuda.sam.CudaMaskDecoder}, running the two-way transformer of {@code cuda.blocks}),
 * pre- and post-processing ({@link io.samstream.gpu.cuda.sam.GpuFramePreprocessor},
 * {@link io.samstream.gpu.cuda.sam.GpuMaskPostprocessor}), the device ring of image embeddings
 * ({@link io.samstream.gpu.cuda.sam.EmbeddingRing}) and the tracker's appearance parts that read it in place; the
 * backend that wires them behind {@link io.samstream.gpu.model.SamBackend} is
 * {@link io.samstream.gpu.cuda.sam.CudaSamBackend}.
 *
 * <p>Builds on {@code cuda}, {@code cuda.kernels} and {@code cuda.blocks}; never imports SAM 2.1's parts
 * ({@code cuda.sam2}).
 */
package io.samstream.gpu.cuda.sam;
