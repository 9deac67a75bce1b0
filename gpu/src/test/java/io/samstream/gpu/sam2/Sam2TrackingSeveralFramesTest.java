package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link Sam2Tracking#track(List, List, List)} with a stream listed several times (its consecutive frames, in list
 * order) on the CPU model: the same results as stepping each stream frame by frame, prompts applying on their
 * entry's frame.
 */
class Sam2TrackingSeveralFramesTest {
    @Test
    void aStreamListedSeveralTimesStepsItsFramesInOrder() throws Exception {
        StateDict sd = CheckpointLoader.load(Sam2CudaParityGpuTest.FIXTURES.resolve("sam2/tiny/checkpoint.pt"));
        try (Sam2Model model = new Sam2Model(sd, Sam2ConfigInference.infer(sd, Sam2ReferenceParityTest.TINY), 2)) {
            int s = model.config().imageSize();
            int frames = 4;
            List<byte[]> rgb = new ArrayList<>();
            for (int t = 0; t < frames; t++) {
                rgb.add(SyntheticClip.frame(t, s));
            }
            ObjectPrompt box = ObjectPrompt.box(1, s * 0.2f, s * 0.2f, s * 0.6f, s * 0.6f);
            ObjectPrompt point = ObjectPrompt.point(2, s * 0.7f, s * 0.7f, true);
            // Reference: stream x prompted on frame 0 (box) and frame 2 (point); stream y prompted on frame 1; frame
            // by frame.
            Sam2Tracking.StreamTracker x = model.openStream(), y = model.openStream();
            List<List<ObjectResult>> expectX = new ArrayList<>(), expectY = new ArrayList<>();
            for (int t = 0; t < frames; t++) {
                expectX.add(x.track(rgb.get(t), t == 0 ? List.of(box) : t == 2 ? List.of(point) : List.of()));
                expectY.add(y.track(rgb.get(t), t == 1 ? List.of(box) : List.of()));
            }
            // The same in one call per two frames: x0, y0, x1, y1 then x2, x3, y2, y3 (any interleaving in order).
            Sam2Tracking.StreamTracker a = model.openStream(), b = model.openStream();
            List<List<ObjectResult>> first = model.track(List.of(a, b, a, b), List.of(rgb.get(0), rgb.get(0),
                    rgb.get(1), rgb.get(1)), List.of(List.of(box), List.of(), List.of(), List.of(box)));
            List<List<ObjectResult>> second = model.track(List.of(a, a, b, b), List.of(rgb.get(2), rgb.get(3),
                    rgb.get(2), rgb.get(3)), List.of(List.of(point), List.of(), List.of(), List.of()));
            same(expectX.get(0), first.get(0));
            same(expectY.get(0), first.get(1));
            same(expectX.get(1), first.get(2));
            same(expectY.get(1), first.get(3));
            same(expectX.get(2), second.get(0));
            same(expectX.get(3), second.get(1));
            same(expectY.get(2), second.get(2));
            same(expectY.get(3), second.get(3));
            assertEquals(List.of(1, 2), List.copyOf(a.objects()));
            assertEquals(0, first.get(1).size(), "y has nothing to follow before its prompt");
            assertEquals(2, second.get(0).size(), "the point applies on x's frame 2");
        }
    }

    private static void same(List<ObjectResult> expected, List<ObjectResult> actual) {
        assertEquals(expected.size(), actual.size());
        for (int i = 0; i < expected.size(); i++) {
            ObjectResult e = expected.get(i), r = actual.get(i);
            assertEquals(e.objectId(), r.objectId());
            assertEquals(e.conditioning(), r.conditioning());
            assertArrayEquals(e.lowResLogits(), r.lowResLogits(), "object " + e.objectId());
            assertEquals(e.objectScore(), r.objectScore(), 0f);
            assertArrayEquals(e.objectPointer(), r.objectPointer());
        }
    }
}
