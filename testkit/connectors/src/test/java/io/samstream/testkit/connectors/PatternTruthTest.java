package io.samstream.testkit.connectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.video.TestPatternSource;
import io.samstream.connectors.video.TestPatternSource.PatternObject;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.testkit.CocoMasks;
import java.util.List;
import org.junit.jupiter.api.Test;

class PatternTruthTest {
    @Test
    void eachShapesTruthIsItsOwnColourInsideItsBoxAndNoTwoOverlap() throws Exception {
        TestPatternSource source = new TestPatternSource("t", 128, 96, 10, 3, 5, false);
        for (int i = 0; i < 3; i++) {
            VideoFrame f = source.next();
            List<PatternObject> objects = source.objectsAt(i);
            assertTrue(objects.size() >= 2, "a scene of several shapes");
            boolean[] seen = new boolean[128 * 96];
            for (PatternObject o : objects) {
                boolean[] m = PatternTruth.visible(f, o);
                assertTrue(CocoMasks.area(m) > 0, o.id() + " visible in frame " + i);
                int[] box = CocoMasks.box(m, 96, 128);
                // Inside the shape's box (inclusive corners, clipped to the frame).
                assertTrue(box[0] >= Math.max(0, o.box()[0]) && box[1] >= Math.max(0, o.box()[1])
                        && box[2] <= Math.min(128, o.box()[2] + 1) && box[3] <= Math.min(96, o.box()[3] + 1),
                        o.id() + " " + java.util.Arrays.toString(box));
                for (int p = 0; p < m.length; p++) {
                    if (m[p]) {
                        assertTrue(!seen[p], "pixel " + p + " belongs to one shape");
                        seen[p] = true;
                        assertEquals(o.rgb(), (f.rgb()[3 * p] & 0xff) << 16 | (f.rgb()[3 * p + 1] & 0xff) << 8
                                | (f.rgb()[3 * p + 2] & 0xff));
                    }
                }
            }
        }
    }
}
