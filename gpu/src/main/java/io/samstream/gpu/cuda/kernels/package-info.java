/**
 * The launchers of the kernels of {@code gpu/src/main/cuda}, one family per class ({@code GemmKernels} for
 * gemm*.cuh, {@code AttentionKernels} for attention*.cuh, ...): each method checks shapes, sizes and alignment
 * before it queues anything, so that a wrong call fails in Java with the numbers named. A family comes from the
 * runtime's {@link io.samstream.gpu.cuda.CudaKernels} ({@code GemmKernels.of(kernels)}); tile sizes are chosen in
 * one place ({@code TileChoice}).
 *
 * <p>Imports only the runtime ({@code io.samstream.gpu.cuda}), never the models' GPU parts.
 */
package io.samstream.gpu.cuda.kernels;
