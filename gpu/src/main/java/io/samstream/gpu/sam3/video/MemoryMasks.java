package io.samstream.gpu.sam3.video;

/**
 * The mask inputs of the tracker's memory encoder ({@code _encode_new_memory}: x 20 - 10 after the sigmoid or, for
 * masks given as prompts, after binarizing), at the square the encoder reads (16 x grid, 1152):
 * <ul>
 *   <li>a tracked frame ({@code _tracker_update_memories}): low-resolution logits upsampled bilinearly to that
 *       square, sigmoid, x 20 - 10;</li>
 *   <li>a new object ({@code propagate_in_video_preflight}): logits at the ViT's input (1008) binarized to +-10,
 *       then resized to that square antialiased ({@code SimpleMaskDownSampler.interpol_size}).</li>
 * </ul>
 */
final class MemoryMasks {
    private MemoryMasks() {}

    /** A tracked frame's logits [high²] already at the encoder's square: sigmoid x 20 - 10. */
    static float[] fromLogits(float[] high) {
        float[] out = new float[high.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = Propagation.sigmoid(high[i]) * 20f - 10f;
        }
        return out;
    }

    /** A prompted frame's logits [input²]: > 0 as +10, else -10, resized antialiased to [maskSize²]. */
    static float[] fromPrompt(float[] logits, int input, int maskSize) {
        float[] bin = new float[logits.length];
        for (int i = 0; i < bin.length; i++) {
            bin[i] = logits[i] > 0 ? 10f : -10f;
        }
        return input == maskSize ? bin : MaskResize.antialiased(bin, input, input, maskSize, maskSize);
    }
}
