package io.samstream.gpu.sam3.video;

import io.samstream.gpu.sam3.VisionFeatures;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/** Detections given by a script of (frame, concept) -> boxes with scores; records the frames it ran on. */
final class ScriptedDetector implements ConceptDetector {
    /** A box in low-resolution pixels with a score. */
    record Box(int x0, int y0, int x1, int y1, float score) {}

    final int side;
    final BiFunction<Integer, Concept, List<Box>> script;
    final List<Integer> calls = new ArrayList<>();
    int frame;

    ScriptedDetector(int side, BiFunction<Integer, Concept, List<Box>> script) {
        this.side = side;
        this.script = script;
    }

    /** Concept phrase to the box it finds moving by (vx, vy) per frame from its frame-0 box, score 0.9. */
    static ScriptedDetector moving(int side, Map<String, Box> start, int vx, int vy) {
        return new ScriptedDetector(side, (t, c) -> {
            Box b = start.get(c.phrase());
            return b == null ? List.of() : List.of(new Box(b.x0 + vx * t, b.y0 + vy * t, b.x1 + vx * t, b.y1 + vy * t,
                    b.score));
        });
    }

    @Override
    public List<Detection> detect(VisionFeatures image, Concept concept, boolean firstFrame) {
        calls.add(frame);
        List<Detection> out = new ArrayList<>();
        int q = 0;
        for (Box b : script.apply(frame, concept)) {
            out.add(new Detection(q++, b.score, new float[] {(float) b.x0 / side, (float) b.y0 / side,
                (float) b.x1 / side, (float) b.y1 / side}, Masks.logits(side, b.x0, b.y0, b.x1, b.y1, 6f)));
        }
        return out;
    }
}
