/**
 * GPU building blocks that several models' parts share, made of the launchers of {@code cuda.kernels}: SAM's
 * two-way transformer ({@link io.samstream.gpu.cuda.blocks.CudaTwoWayTransformer}), which SAM 2.1's mask decoder
 * runs with its own weights. SAM's and SAM 2.1's GPU parts ({@code cuda.sam}, {@code cuda.sam2}) share code only
 * through here and the layers below, never with each other.
 */
package io.samstream.gpu.cuda.blocks;
