package io.samstream.gpu.sam3.video;

import java.util.List;

/**
 * What one frame of a stream gives.
 *
 * @param frame   the stream's frame index (0 for the first)
 * @param objects the objects shown, by id
 * @param hidden  ids of tracked objects not shown on this frame (no mask, or suppressed), not yet lost
 * @param lost    ids whose object has not been shown for {@code lostAfter} frames in a row, reported once
 * @param dropped ids whose tracking ended on this frame: removed by the hot-start rule, forgotten after being
 *                lost, or of a concept no longer asked for
 */
public record VideoStep(int frame, List<TrackedObject> objects, List<Long> hidden, List<Long> lost,
        List<Long> dropped) {}
