package io.samstream.gpu.image;

import io.samstream.gpu.tensor.Tensor;
import java.util.List;

/**
 * The reference pre-processing of a batch of frames on the CPU: each frame resized so its longest side is
 * the model input size ({@link ResizeLongestSide}, Pillow's bilinear), normalized and zero-padded
 * ({@link SamPreprocessor}) into one {@code [B, 3, S, S]} fp32 batch. This is
 * {@code SamBackend.encodeFrames}' default; the CUDA backend does the same on the GPU.
 */
public final class FramePreprocessor {
    private final ResizeLongestSide resize;
    private final SamPreprocessor normalize;

    /** @param inputSize side S of the square encoder input (1024 for SAM) */
    public FramePreprocessor(int inputSize) {
        this.resize = new ResizeLongestSide(inputSize);
        this.normalize = new SamPreprocessor(inputSize);
    }

    public int inputSize() {
        return normalize.inputSize();
    }

    /** The encoder input of {@code frames}, in order; frames may differ in size. */
    public Tensor batch(List<? extends FrameImage> frames) {
        if (frames.isEmpty()) {
            throw new IllegalArgumentException("a batch needs at least one frame");
        }
        int s = inputSize();
        Tensor batch = Tensor.zeros(frames.size(), 3, s, s);
        for (int i = 0; i < frames.size(); i++) {
            FrameImage frame = frames.get(i);
            if (frame == null) {
                throw new IllegalArgumentException("frame " + i + " of the batch is null");
            }
            normalize.applyInto(resize.apply(frame.toRgb()), batch, i);
        }
        return batch;
    }
}
