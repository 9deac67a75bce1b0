package io.samstream.stream.track;

import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.tensor.Tensor;
import java.util.List;

/** Finds objects in a frame without prompts (SAM's automatic mask generation); the tracker makes them tracks. */
public interface ObjectDiscovery {
    /**
     * One object found.
     *
     * @param lowResLogits its mask's logits {@code [1, L, L]}
     * @param box          its box in pixels {@code [x0, y0, x1, y1]}
     */
    record Found(Tensor lowResLogits, float predictedIou, float stability, double[] box, long area) {}

    /**
     * The objects of the frame whose embedding this is, best first.
     *
     * @param covered row-major {@code height * width} pixels that tracked objects cover already (where a
     *                search need not look again); a hint, the tracker checks novelty itself
     */
    List<Found> discover(ImageEmbedding embedding, int width, int height, boolean[] covered);
}
