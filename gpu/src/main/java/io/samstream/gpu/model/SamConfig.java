package io.samstream.gpu.model;

import java.util.Arrays;

/**
 * The shape of a SAM model. Never given by hand: {@code SamConfigInference} reads it off the tensor
 * shapes of a checkpoint, so vit_b / vit_l / vit_h and smaller SAM-family ViTs load with no flags.
 *
 * @param imageSize           side of the square encoder input (1024 for the released models)
 * @param patchSize           ViT patch size (16)
 * @param encoderDim          ViT embedding width (768 / 1024 / 1280)
 * @param encoderDepth        number of ViT blocks
 * @param encoderHeads        attention heads per block
 * @param encoderMlpDim       hidden width of the block MLPs
 * @param windowSize          side of the attention windows of the windowed blocks (14)
 * @param globalAttnIndexes   blocks that attend globally instead of within windows
 * @param promptDim           embedding width of the neck output, prompt encoder and mask decoder (256)
 * @param maskInChans         hidden channels of the dense (mask) prompt downscaler (16)
 * @param decoderDepth        two-way transformer layers in the mask decoder (2)
 * @param decoderHeads        attention heads in the mask decoder (8 in every release; not in the shapes)
 * @param decoderMlpDim       hidden width of the decoder MLPs (2048)
 * @param attentionDownsample internal width divisor of the decoder's cross attentions (2)
 * @param numMultimaskOutputs masks predicted for an ambiguous prompt (3)
 * @param iouHeadDepth        layers of the IoU prediction MLP (3)
 * @param iouHeadHiddenDim    hidden width of the IoU prediction MLP (256)
 */
public record SamConfig(
        int imageSize,
        int patchSize,
        int encoderDim,
        int encoderDepth,
        int encoderHeads,
        int encoderMlpDim,
        int windowSize,
        int[] globalAttnIndexes,
        int promptDim,
        int maskInChans,
        int decoderDepth,
        int decoderHeads,
        int decoderMlpDim,
        int attentionDownsample,
        int numMultimaskOutputs,
        int iouHeadDepth,
        int iouHeadHiddenDim) {

    public SamConfig {
        globalAttnIndexes = globalAttnIndexes.clone();
    }

    /** Side of the image embedding grid: 64 for the released models. */
    public int embeddingSize() {
        return imageSize / patchSize;
    }

    /** Side of the low-resolution mask logits: 4x the embedding grid (256 for the released models). */
    public int lowResSize() {
        return 4 * embeddingSize();
    }

    public int encoderHeadDim() {
        return encoderDim / encoderHeads;
    }

    public boolean isGlobalAttention(int block) {
        for (int i : globalAttnIndexes) {
            if (i == block) {
                return true;
            }
        }
        return false;
    }

    @Override
    public int[] globalAttnIndexes() {
        return globalAttnIndexes.clone();
    }

    /** A short name for logs: the released variant when it is one, else the dimensions. */
    public String describe() {
        String variant = switch (encoderDim * 1000 + encoderDepth) {
            case 768_012 -> "vit_b";
            case 1024_024 -> "vit_l";
            case 1280_032 -> "vit_h";
            default -> "vit(dim=" + encoderDim + ",depth=" + encoderDepth + ")";
        };
        return variant + " heads=" + encoderHeads + " window=" + windowSize + " global="
                + Arrays.toString(globalAttnIndexes) + " input=" + imageSize + " prompt_dim=" + promptDim;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SamConfig c && describe().equals(c.describe()) && toString().equals(c.toString());
    }

    @Override
    public int hashCode() {
        return toString().hashCode();
    }

    @Override
    public String toString() {
        return "SamConfig[imageSize=" + imageSize + ", patchSize=" + patchSize + ", encoderDim=" + encoderDim
                + ", encoderDepth=" + encoderDepth + ", encoderHeads=" + encoderHeads + ", encoderMlpDim="
                + encoderMlpDim + ", windowSize=" + windowSize + ", globalAttnIndexes="
                + Arrays.toString(globalAttnIndexes) + ", promptDim=" + promptDim + ", maskInChans=" + maskInChans
                + ", decoderDepth=" + decoderDepth + ", decoderHeads=" + decoderHeads + ", decoderMlpDim="
                + decoderMlpDim + ", attentionDownsample=" + attentionDownsample + ", numMultimaskOutputs="
                + numMultimaskOutputs + ", iouHeadDepth=" + iouHeadDepth + ", iouHeadHiddenDim=" + iouHeadHiddenDim
                + "]";
    }
}
