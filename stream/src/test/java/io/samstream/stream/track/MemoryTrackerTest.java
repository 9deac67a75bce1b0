package io.samstream.stream.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.Sam2Model;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link MemoryTracker} on the tiny SAM 2 fixture whose object-score head is pinned by its final bias: at -1000
 * no object is ever visible (hidden, then lost), at +1000 every object is (shown). The object score, not a stub,
 * decides what the records list.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MemoryTrackerTest {
    static final Path SAM2_TINY = Path.of("../gpu/src/test/resources/fixtures/sam2/tiny/checkpoint.pt");
    static final String SCORE_BIAS = "sam_mask_decoder.pred_obj_score_head.layers.2.bias";
    static final int W = 128;
    static final int H = 96;

    private Sam2Model never;
    private Sam2Model always;
    private final TestPatternSource clip = new TestPatternSource("clip", W, H, 10, 20, 3, false);

    @BeforeAll
    void load() {
        never = withScoreBias(-1000f);
        always = withScoreBias(1000f);
    }

    @AfterAll
    void close() {
        never.close();
        always.close();
    }

    private static Sam2Model withScoreBias(float bias) {
        StateDict sd = ModelCheckpoints.load(SAM2_TINY);
        Map<String, Tensor> t = new LinkedHashMap<>();
        for (String k : sd.keys()) {
            t.put(k, sd.get(k));
        }
        t.put(SCORE_BIAS, new Tensor(new float[] {bias}, 1));
        return ModelCheckpoints.openSam2(new StateDict(SAM2_TINY, t), 2);
    }

    private static TrackPrompts box(long revision, long generation, int... ids) {
        List<TrackPrompts.Seed> seeds = new java.util.ArrayList<>();
        for (int id : ids) {
            seeds.add(new TrackPrompts.Seed(new ObjectPrompt(id, null, new double[] {10 + id, 10, 60 + id, 60}),
                    revision));
        }
        return new TrackPrompts(seeds, generation);
    }

    @Test
    void anObjectNeverVisibleIsHiddenThenLostOnceAndComesBackWhenReprompted() {
        TrackingMeters meters = TrackingMeters.none();
        MemoryTracker t = new MemoryTracker("s", never, 3, meters);
        for (int f = 0; f < 2; f++) {
            ObjectTracker.Frame r = t.step(f, W, H, clip.render(f), box(1, 0, 1));
            assertEquals(List.of(), r.masks(), "frame " + f);
            assertEquals(List.of(1), r.hidden(), "frame " + f);
            assertEquals(List.of(), r.lost(), "frame " + f);
        }
        ObjectTracker.Frame third = t.step(2, W, H, clip.render(2), box(1, 0, 1));
        assertEquals(List.of(), third.hidden());
        assertEquals(List.of(1), third.lost(), "the third hidden frame in a row");
        assertEquals(1.0, meters.lost().count());
        assertEquals(List.of(), t.objects(), "its memory is dropped");
        for (int f = 3; f < 5; f++) { // the same prompt: it stays lost, reported once only
            ObjectTracker.Frame r = t.step(f, W, H, clip.render(f), box(1, 0, 1));
            assertEquals(List.of(), r.hidden(), "frame " + f);
            assertEquals(List.of(), r.lost(), "frame " + f);
        }
        ObjectTracker.Frame again = t.step(5, W, H, clip.render(5), box(2, 0, 1)); // its prompt updated
        assertEquals(List.of(1), again.hidden());
        assertEquals(List.of(1), t.objects());
    }

    @Test
    void visibleObjectsAreShownAndRemovedOrResetObjectsLeave() {
        MemoryTracker t = new MemoryTracker("s", always, 3, TrackingMeters.none());
        for (int f = 0; f < 3; f++) {
            ObjectTracker.Frame r = t.step(f, W, H, clip.render(f), box(1, 0, 1, 2));
            assertEquals(List.of(1, 2), r.masks().stream().map(MaskReadout.Readout::id).toList(), "frame " + f);
            assertEquals(List.of(), r.hidden());
            for (MaskReadout.Readout m : r.masks()) {
                assertEquals(H, m.summary().height());
                assertEquals(W, m.summary().width());
                assertTrue(m.stability() >= 0 && m.stability() <= 1);
            }
        }
        ObjectTracker.Frame removed = t.step(3, W, H, clip.render(3), box(1, 0, 2)); // object 1 removed
        assertEquals(List.of(2), removed.masks().stream().map(MaskReadout.Readout::id).toList());
        assertEquals(List.of(2), t.objects());
        ObjectTracker.Frame reset = t.step(4, W, H, clip.render(4), box(1, 1, 3)); // a reset: only object 3
        assertEquals(List.of(3), reset.masks().stream().map(MaskReadout.Readout::id).toList());
        assertEquals(List.of(3), t.objects());
        ObjectTracker.Frame none = t.step(5, W, H, clip.render(5), box(1, 1));
        assertEquals(List.of(), none.masks());
        assertEquals(List.of(), t.objects());
        ObjectTracker.Frame back = t.step(6, W, H, clip.render(6), box(1, 1, 4)); // added after an empty frame
        assertEquals(List.of(4), back.masks().stream().map(MaskReadout.Readout::id).toList());
    }

    @Test
    void promptsAreScaledToTheModelInput() {
        io.samstream.gpu.sam2.ObjectPrompt p = MemoryTracker.modelPrompt(new ObjectPrompt(5,
                new double[][] {{64, 48, 0}}, new double[] {0, 0, 256, 96}), 128, 256, 96);
        assertEquals(5, p.objectId());
        assertEquals(128f, p.box()[2], 1e-4);
        assertEquals(128f, p.box()[3], 1e-4);
        assertEquals(32f, p.points()[0][0], 1e-4);
        assertEquals(64f, p.points()[0][1], 1e-4);
        assertEquals(0, p.labels()[0]);
    }
}
