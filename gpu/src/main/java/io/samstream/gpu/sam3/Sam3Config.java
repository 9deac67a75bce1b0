package io.samstream.gpu.sam3;

import java.util.Arrays;

/**
 * The shape of a SAM 3 image model (the detector half of {@code sam3.pt}), as {@link Sam3ConfigInference} reads
 * it from tensor shapes. Behaviour switches are not configurable: they are what Meta's
 * {@code build_sam3_image_model} sets (RoPE 2-D with interpolation to the window size, tiled absolute position
 * embedding, pre-LN everywhere, the DETR decoder with box refinement, log box relative position bias and a
 * presence token, dot-product scoring, the pixel-decoder mask head with prompt cross-attention).
 *
 * @param vision   the image encoder (ViT and its neck)
 * @param text     the text encoder
 * @param detector the fusion encoder, decoder, scoring, geometry encoder and mask head
 */
public record Sam3Config(Vision vision, Text text, Detector detector) {

    /** Epsilon of every LayerNorm and GroupNorm (torch's default). */
    public static final double NORM_EPS = 1e-5;

    /** RoPE base of the ViT's attention. */
    public static final double ROPE_THETA = 10000.0;

    /**
     * The ViT: {@code imageSize / patchSize} tokens a side; blocks attend within windows of {@code windowSize}
     * tokens a side except the global ones; RoPE angles are scaled so that every block sees window-sized
     * positions; the absolute position embedding of {@code pretrainGrid} a side (after a class token) is tiled.
     * The neck makes {@code levels} maps of the detector's width at scales 4, 2, 1 (and 0.5, dropped).
     */
    public record Vision(int imageSize, int patchSize, int embedDim, int depth, int heads, int mlpHidden,
            int windowSize, int[] globalBlocks, int pretrainGrid, int levels) {
        public int grid() {
            return imageSize / patchSize;
        }

        public int headDim() {
            return embedDim / heads;
        }

        public boolean isGlobal(int block) {
            return Arrays.stream(globalBlocks).anyMatch(b -> b == block);
        }

        @Override
        public String toString() {
            return "ViT " + embedDim + " x " + depth + " (" + heads + " heads, mlp " + mlpHidden + ", windows "
                    + windowSize + ", global " + Arrays.toString(globalBlocks) + "), input " + imageSize
                    + " patch " + patchSize;
        }
    }

    /** The causal text transformer (CLIP-style) and its resizer to the detector's width. */
    public record Text(int vocabSize, int contextLength, int width, int layers, int heads, int mlpHidden,
            int projectionDim) {
        @Override
        public String toString() {
            return "text " + width + " x " + layers + " (" + heads + " heads), context " + contextLength
                    + ", vocabulary " + vocabSize;
        }
    }

    /**
     * The detector at width {@code dModel}: a fusion encoder, a decoder of {@code queries} object queries with a
     * presence token, the geometry (exemplar box) encoder, the dot-product scorer and the mask head.
     */
    public record Detector(int dModel, int heads, int encoderLayers, int encoderFfn, int decoderLayers,
            int decoderFfn, int queries, int geometryLayers, int geometryFfn, int roiSize, int pixelDecoderConvs,
            int scoringHidden) {
        @Override
        public String toString() {
            return "detector " + dModel + " (" + heads + " heads), encoder " + encoderLayers + ", decoder "
                    + decoderLayers + ", " + queries + " queries, geometry " + geometryLayers;
        }
    }

    @Override
    public String toString() {
        return "SAM 3: " + vision + "; " + text + "; " + detector;
    }
}
