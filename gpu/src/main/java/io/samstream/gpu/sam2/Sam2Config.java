package io.samstream.gpu.sam2;

import java.util.Arrays;

/**
 * The shape of a SAM 2.1 model: what {@link Sam2ConfigInference} reads from a checkpoint's tensor shapes plus
 * the few values shapes cannot tell ({@link Layout}).
 *
 * <p>Behaviour switches are not configurable: they are fixed at what Meta's SAM 2.1 configurations and
 * {@code build_sam2_video_predictor(apply_postprocessing=True)} set (high-resolution features in the decoder,
 * object scores with the MLP head, fixed no-object pointer, signed and projected temporal encoding of the
 * object pointers, multimask tokens for the pointer, sigmoid 20x-10 for the memory encoder, masks from points
 * binarized for memory, dynamic multimask by stability 0.05 / 0.98), except hole filling, which is left out.
 *
 * @param imageSize       model input side (square), 1024 for the releases
 * @param embedDim        Hiera's first-stage width (96 tiny/small, 112 base+, 144 large)
 * @param stages          Hiera blocks per stage
 * @param hidden          width of the neck, prompt encoder, decoder and memory attention (256)
 * @param memDim          width of the memory features (64)
 * @param numMaskmem      memories attended: 1 conditioning + 6 previous frames (7)
 * @param memAttnLayers   memory attention layers (4)
 * @param memAttnFfn      their feed-forward width (2048)
 * @param decoderMlp      the two-way transformer's MLP width (2048)
 * @param iouHidden       the IoU head's hidden width (256)
 * @param downsampleLayers stride-2 convolutions of the memory encoder's mask downsampler (4: 1024 to 64)
 * @param downsampleKernel their kernel (3, padding 1)
 * @param fuserLayers     ConvNeXt blocks of the memory fuser (2)
 * @param fuserKernel     their depthwise kernel (7)
 * @param layout          values the shapes do not tell
 */
public record Sam2Config(int imageSize, int embedDim, int[] stages, int hidden, int memDim, int numMaskmem,
        int memAttnLayers, int memAttnFfn, int decoderMlp, int iouHidden, int downsampleLayers,
        int downsampleKernel, int fuserLayers, int fuserKernel, Layout layout) {

    /** The mask decoder's attention heads: fixed at 8 in SAM2Base._build_sam_heads. */
    public static final int DECODER_HEADS = 8;
    /** Object pointers attended, the current frame's included (SAM2Base.max_obj_ptrs_in_encoder). */
    public static final int MAX_OBJECT_POINTERS = 16;

    /**
     * What tensor shapes do not tell: Hiera's heads in the first stage, its global-attention blocks and window
     * size per stage, the input size, and the memory attention's heads.
     */
    public record Layout(String name, int heads, int[] globalAttBlocks, int[] windowSpec, int imageSize,
            int memAttnHeads) {
        @Override
        public String toString() {
            return name + " (heads " + heads + ", global attention " + Arrays.toString(globalAttBlocks)
                    + ", windows " + Arrays.toString(windowSpec) + ", input " + imageSize + ")";
        }
    }

    public int depth() {
        return Arrays.stream(stages).sum();
    }

    /** Index of the last block of each stage. */
    public int[] stageEnds() {
        int[] ends = new int[stages.length];
        int sum = 0;
        for (int i = 0; i < stages.length; i++) {
            sum += stages[i];
            ends[i] = sum - 1;
        }
        return ends;
    }

    /** Width of stage i (doubling per stage). */
    public int stageDim(int i) {
        return embedDim << i;
    }

    /** Side of the top (stride-16) feature map. */
    public int featureSize() {
        return imageSize / 16;
    }

    /** Side of the decoder's low-resolution masks (stride 4). */
    public int lowResSize() {
        return imageSize / 4;
    }

    @Override
    public String toString() {
        return "SAM 2.1 " + layout.name() + ": Hiera " + embedDim + " x " + Arrays.toString(stages) + ", hidden "
                + hidden + ", memory " + memDim + " x " + numMaskmem + ", input " + imageSize;
    }
}
