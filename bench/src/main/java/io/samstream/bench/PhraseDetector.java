package io.samstream.bench;

import io.samstream.gpu.sam3.VisionFeatures;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import io.samstream.gpu.sam3.video.Concept;
import io.samstream.gpu.sam3.video.ConceptDetector;
import io.samstream.gpu.sam3.video.Detection;
import io.samstream.gpu.sam3.video.Sam3ConceptDetector;
import io.samstream.gpu.sam3.video.Sam3VideoModel;
import io.samstream.gpu.sam3.video.Sam3VideoSettings;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A stream's detector: for each phrase the model's detector ({@link Sam3ConceptDetector}, as {@link
 * Sam3VideoModel#openStream(Sam3VideoSettings)} makes it) at that phrase's threshold and NMS IoU, counting the
 * detections it hands over.
 */
final class PhraseDetector implements ConceptDetector {
    private final Map<Concept, ConceptDetector> byConcept = new LinkedHashMap<>();
    long calls;
    long detections;
    /** Times each detection while set ({@code --profile}). */
    volatile Sam3StepProfile profile;

    PhraseDetector(Sam3VideoModel model, Sam3Tokenizer tokenizer, Map<Concept, Calibration> calibrations) {
        calibrations.forEach((concept, c) -> byConcept.put(concept, new Sam3ConceptDetector(model.detector(),
                tokenizer, c.threshold(), c.nmsIou())));
    }

    @Override
    public List<Detection> detect(VisionFeatures image, Concept concept, boolean firstFrame) {
        long t0 = System.nanoTime();
        List<Detection> d = byConcept.get(concept).detect(image, concept, firstFrame);
        Sam3StepProfile p = profile;
        if (p != null) {
            p.add("detect (parts and CPU scoring)", System.nanoTime() - t0);
        }
        calls++;
        detections += d.size();
        return d;
    }
}
