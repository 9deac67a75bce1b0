package io.samstream.gpu.sam3.video;

import io.samstream.gpu.sam3.VisionFeatures;
import java.util.List;

/** Finds a concept's instances on a frame (the image path; a test may script it). */
public interface ConceptDetector {
    /**
     * The instances of {@code concept} on the frame whose features are {@code image}, above the detection
     * threshold and after non-maximum suppression, in query order. {@code firstFrame}: the concept's first frame,
     * where its exemplar boxes apply.
     */
    List<Detection> detect(VisionFeatures image, Concept concept, boolean firstFrame);
}
