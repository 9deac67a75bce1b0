package io.samstream.stream.track;

import io.samstream.gpu.model.ImageEmbedding;

/**
 * A stream tracker whose frames are encoded by SAM's image encoder and decoded in waves with the other streams'
 * frames ({@link Wave}): kalman mode, or fixed prompts.
 */
public interface WaveTracker extends StreamTracker {
    /**
     * Begins one frame: the returned step decodes its prompts (with other streams' frames) and settles what it
     * tracks. Frames are begun and finished one at a time.
     *
     * @throws IllegalArgumentException when a prompt lies outside the frame (names the object)
     */
    FrameStep begin(long frame, int width, int height, ImageEmbedding embedding, TrackPrompts prompts);
}
