/**
 * The CUDA runtime of the GPU parts: the context, streams, events, CUDA graphs and their cache, device memory pools
 * and buffers, pinned host buffers and staged copies, weight upload, and the fatbin of {@code gpu/src/main/cuda}
 * ({@link io.samstream.gpu.cuda.CudaKernels}: its kernel table and the checked launch).
 *
 * <p>The bottom layer of the CUDA packages, knowing none above it: {@code cuda.kernels} (the launchers, one family
 * per class) builds on it, and the models' GPU parts ({@code cuda.sam}, {@code cuda.sam2}) on both.
 */
package io.samstream.gpu.cuda;
