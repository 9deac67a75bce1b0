package io.samstream.gpu.sam3;

import io.samstream.gpu.sam2.Sam2Config;

/**
 * The shape of SAM 3's tracker (the {@code tracker.*} half of {@code sam3.pt}: SAM 2's memory architecture, Meta's
 * {@code build_tracker}), as {@link Sam3ConfigInference#inferTracker} reads it. It sees the detector's ViT through
 * the backbone's second neck ({@code sam2_convs}) at {@code grid} tokens a side (72 at input 1008, stride 14).
 *
 * <p>Sizes follow from the grid: low-resolution masks at 4 x grid (288), and the memory encoder's mask input at
 * 16 x grid (1152: {@code SimpleMaskDownSampler.interpol_size}, downsampled by stride 16 back to the grid), not
 * the 1008 the ViT sees.
 *
 * @param inputSize        the ViT's input side (1008)
 * @param grid             the feature map side (72)
 * @param hidden           width of the features, prompts, decoder and memory attention (the detector's width, 256)
 * @param memDim           width of the memory features (64)
 * @param numMaskmem       memories attended: 1 conditioning slot + 6 previous frames (7)
 * @param memAttnLayers    memory attention layers (4)
 * @param memAttnFfn       their feed-forward width (2048)
 * @param decoderMlp       the mask decoder's two-way transformer MLP width (2048)
 * @param iouHidden        the IoU head's hidden width (256)
 * @param downsampleLayers stride-2 convolutions of the mask downsampler (4)
 * @param downsampleKernel their kernel (3)
 * @param fuserLayers      ConvNeXt blocks of the memory fuser (2)
 * @param fuserKernel      their depthwise kernel (7)
 * @param maskInChans      the prompt encoder's mask channels (16)
 */
public record Sam3TrackerConfig(int inputSize, int grid, int hidden, int memDim, int numMaskmem, int memAttnLayers,
        int memAttnFfn, int decoderMlp, int iouHidden, int downsampleLayers, int downsampleKernel, int fuserLayers,
        int fuserKernel, int maskInChans) {

    /** Memory attention heads: {@code RoPEAttention(num_heads=1)} in {@code _create_tracker_transformer}. */
    public static final int MEM_ATTN_HEADS = 1;
    /** Conditioning frames attended ({@code max_cond_frames_in_attn}). */
    public static final int MAX_CONDITIONING_FRAMES = 4;
    /** Object pointers attended at most, the current frame's included ({@code max_obj_ptrs_in_encoder}). */
    public static final int MAX_OBJECT_POINTERS = 16;

    /** Side of the low-resolution mask logits (4 x grid). */
    public int lowResSize() {
        return 4 * grid;
    }

    /** Side of the mask the memory encoder reads (16 x grid). */
    public int maskSize() {
        return 16 * grid;
    }

    /**
     * The configuration the reused SAM 2.1 parts (memory encoder and attention, prompt encoder, mask decoder,
     * memory readout) are built with. They are sized by one number, the square their memory encoder reads
     * (stride 16 to the feature map, stride 4 to the low-resolution masks): here {@link #maskSize()}. There is no
     * Hiera (the ViT's features come from the detector), so its width and stages are empty. The prompt encoder
     * scales point coordinates by that size, not by the ViT's input: SAM 3's video path gives it no points (only
     * the padding point and mask prompts), and a caller that would must scale points by maskSize / inputSize.
     */
    public Sam2Config sam2Parts() {
        Sam2Config.Layout layout = new Sam2Config.Layout("sam3-tracker", 0, new int[0], new int[0], maskSize(),
                MEM_ATTN_HEADS);
        return new Sam2Config(maskSize(), 0, new int[0], hidden, memDim, numMaskmem, memAttnLayers, memAttnFfn,
                decoderMlp, iouHidden, downsampleLayers, downsampleKernel, fuserLayers, fuserKernel, layout);
    }

    @Override
    public String toString() {
        return "tracker " + hidden + " (memory " + memDim + " x " + numMaskmem + ", attention " + memAttnLayers
                + " layers), grid " + grid + " at input " + inputSize;
    }
}
