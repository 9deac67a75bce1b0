package io.samstream.stream.track.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.Sam2Model;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.MaskReadout;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
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
        return withScoreBias(bias, false);
    }

    /** @param emptyMasks the mask decoder's hypernetworks' last layer zeroed: every mask's logits are 0, so empty */
    private static Sam2Model withScoreBias(float bias, boolean emptyMasks) {
        StateDict sd = ModelCheckpoints.load(SAM2_TINY);
        Map<String, Tensor> t = new LinkedHashMap<>();
        for (String k : sd.keys()) {
            Tensor v = sd.get(k);
            boolean zero = emptyMasks && k.startsWith("sam_mask_decoder.output_hypernetworks_mlps.")
                    && k.contains(".layers.2.");
            t.put(k, zero ? new Tensor(new float[v.data().length], v.shape()) : v);
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
            TrackedFrame r = t.step(f, W, H, clip.render(f), box(1, 0, 1));
            assertEquals(List.of(), r.masks(), "frame " + f);
            assertEquals(List.of(1), r.hidden(), "frame " + f);
            assertEquals(List.of(), r.lost(), "frame " + f);
        }
        TrackedFrame third = t.step(2, W, H, clip.render(2), box(1, 0, 1));
        assertEquals(List.of(), third.hidden());
        assertEquals(List.of(1), third.lost(), "the third hidden frame in a row");
        assertEquals(1.0, meters.lost().count());
        assertEquals(List.of(), t.objects(), "its memory is dropped");
        for (int f = 3; f < 5; f++) { // the same prompt: it stays lost, reported once only
            TrackedFrame r = t.step(f, W, H, clip.render(f), box(1, 0, 1));
            assertEquals(List.of(), r.hidden(), "frame " + f);
            assertEquals(List.of(), r.lost(), "frame " + f);
        }
        TrackedFrame again = t.step(5, W, H, clip.render(5), box(2, 0, 1)); // its prompt updated
        assertEquals(List.of(1), again.hidden());
        assertEquals(List.of(1), t.objects());
    }

    @Test
    void anObjectScoredVisibleWithAnEmptyMaskIsHiddenNeverPublishedWithAreaZero() {
        try (Sam2Model empty = withScoreBias(1000f, true)) {
            MemoryTracker t = new MemoryTracker("s", empty, 3, TrackingMeters.none());
            for (int f = 0; f < 2; f++) {
                TrackedFrame r = t.step(f, W, H, clip.render(f), box(1, 0, 1));
                assertEquals(List.of(), r.masks(), "frame " + f + ": no entry with area 0");
                assertEquals(List.of(1), r.hidden(), "frame " + f);
            }
            assertEquals(List.of(1), t.step(2, W, H, clip.render(2), box(1, 0, 1)).lost());
        }
    }

    @Test
    void visibleObjectsAreShownAndRemovedOrResetObjectsLeave() {
        MemoryTracker t = new MemoryTracker("s", always, 3, TrackingMeters.none());
        for (int f = 0; f < 3; f++) {
            TrackedFrame r = t.step(f, W, H, clip.render(f), box(1, 0, 1, 2));
            assertEquals(List.of(1, 2), r.masks().stream().map(MaskReadout.Readout::id).toList(), "frame " + f);
            assertEquals(List.of(), r.hidden());
            for (MaskReadout.Readout m : r.masks()) {
                assertEquals(H, m.summary().height());
                assertEquals(W, m.summary().width());
                assertTrue(m.stability() >= 0 && m.stability() <= 1);
            }
        }
        TrackedFrame removed = t.step(3, W, H, clip.render(3), box(1, 0, 2)); // object 1 removed
        assertEquals(List.of(2), removed.masks().stream().map(MaskReadout.Readout::id).toList());
        assertEquals(List.of(2), t.objects());
        TrackedFrame reset = t.step(4, W, H, clip.render(4), box(1, 1, 3)); // a reset: only object 3
        assertEquals(List.of(3), reset.masks().stream().map(MaskReadout.Readout::id).toList());
        assertEquals(List.of(3), t.objects());
        TrackedFrame none = t.step(5, W, H, clip.render(5), box(1, 1));
        assertEquals(List.of(), none.masks());
        assertEquals(List.of(), t.objects());
        TrackedFrame back = t.step(6, W, H, clip.render(6), box(1, 1, 4)); // added after an empty frame
        assertEquals(List.of(4), back.masks().stream().map(MaskReadout.Readout::id).toList());
    }

    @Test
    void aStreamTakenOverGoesOnFromItsObjectsLastBoxesUnderTheirIds() {
        MemoryTracker first = new MemoryTracker("s", always, 3, TrackingMeters.none());
        first.keepStateEvery(2);
        for (int f = 0; f < 5; f++) {
            first.step(f, W, H, clip.render(f), box(1, 0, 1, 2));
        }
        assertTrue(first.takeState(3).isEmpty(), "kept after every second frame only");
        MemoryTrackerState kept = first.takeState(4).orElseThrow();
        MemoryTrackerState moved = MemoryTrackerState.fromJson(kept.toJson()); // as the state topic carries it
        assertEquals(List.of(1, 2), moved.ids());
        for (MemoryTrackerState.ObjectState o : moved.objects()) {
            assertEquals(1, o.revision());
            assertEquals(0, o.hiddenFrames());
            assertTrue(o.box() != null && o.box()[2] <= W && o.box()[3] <= H, "object " + o.id());
        }

        TrackingMeters meters = TrackingMeters.none();
        MemoryTracker next = new MemoryTracker("s", always, 3, meters);
        next.restore(moved);
        TrackedFrame r = next.step(5, W, H, clip.render(5), box(1, 0, 1, 2));
        assertEquals(List.of(1, 2), r.masks().stream().map(MaskReadout.Readout::id).toList());
        assertEquals(List.of(1, 2), next.objects());
        assertEquals(0.0, meters.lost().count());
        // Conditioned on the carried boxes, not seeded again from the configured ones.
        List<TrackPrompts.Seed> carried = moved.objects().stream().map(o -> new TrackPrompts.Seed(
                new ObjectPrompt(o.id(), null, o.box()), 1)).toList();
        TrackedFrame fromBoxes = new MemoryTracker("c", always, 3, TrackingMeters.none()).step(5, W, H,
                clip.render(5), new TrackPrompts(carried, 0));
        TrackedFrame fromConfig = new MemoryTracker("d", always, 3, TrackingMeters.none()).step(5, W, H,
                clip.render(5), box(1, 0, 1, 2));
        assertTrue(!sameMasks(fromBoxes, fromConfig), "the carried boxes must differ from the configured ones here");
        assertTrue(sameMasks(r, fromBoxes), "resumed from the carried boxes");
        // Then it follows them from memory under the same revision: not conditioned again.
        TrackedFrame later = next.step(6, W, H, clip.render(6), box(1, 0, 1, 2));
        assertEquals(List.of(1, 2), later.masks().stream().map(MaskReadout.Readout::id).toList());
        assertThrows(IllegalStateException.class, () -> next.restore(moved), "restored before the first frame only");
    }

    @Test
    void anObjectHiddenWhenItsStreamMovesIsLostOnceOnTheNewEngine() {
        MemoryTracker first = new MemoryTracker("s", never, 5, TrackingMeters.none());
        first.step(0, W, H, clip.render(0), box(1, 0, 1));
        first.step(1, W, H, clip.render(1), box(1, 0, 1));
        MemoryTrackerState s = MemoryTrackerState.fromJson(first.state(1).toJson());
        assertEquals(2, s.objects().get(0).hiddenFrames());
        assertEquals(null, s.objects().get(0).box(), "never visible: no box");
        TrackingMeters meters = TrackingMeters.none();
        MemoryTracker next = new MemoryTracker("s", never, 5, meters);
        next.restore(s);
        TrackedFrame r = next.step(2, W, H, clip.render(2), box(1, 0, 1));
        assertEquals(List.of(1), r.lost());
        assertEquals(1.0, meters.lost().count());
        assertEquals(List.of(), next.objects());
        TrackedFrame after = next.step(3, W, H, clip.render(3), box(1, 0, 1));
        assertEquals(List.of(), after.lost(), "reported once");
        assertEquals(List.of(), after.hidden());
        assertEquals(List.of(1), next.step(4, W, H, clip.render(4), box(2, 0, 1)).hidden(), "back once re-prompted");
    }

    @Test
    void aDamagedStateIsRefusedNamingWhatIsWrong() {
        com.fasterxml.jackson.databind.node.ObjectNode o = new MemoryTrackerState(3, 0,
                List.of(new MemoryTrackerState.ObjectState(7, 1, new double[] {1, 2, 30, 40}, 0)), Map.of(9, 2L)).toJson();
        assertEquals(List.of(7), MemoryTrackerState.fromJson(o).ids());
        assertEquals(Map.of(9, 2L), MemoryTrackerState.fromJson(o).ended());
        ((com.fasterxml.jackson.databind.node.ArrayNode) o.get("objects").get(0).get("box")).set(2,
                com.fasterxml.jackson.databind.node.DoubleNode.valueOf(0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MemoryTrackerState.fromJson(o));
        assertTrue(e.getMessage().contains("object 7") && e.getMessage().contains("box"), e.getMessage());
        o.remove("objects");
        assertThrows(IllegalArgumentException.class, () -> MemoryTrackerState.fromJson(o));
    }

    private static boolean sameMasks(TrackedFrame a, TrackedFrame b) {
        if (a.masks().size() != b.masks().size()) {
            return false;
        }
        for (int i = 0; i < a.masks().size(); i++) {
            if (!java.util.Arrays.equals(a.masks().get(i).summary().columnMajorBits(),
                    b.masks().get(i).summary().columnMajorBits())) {
                return false;
            }
        }
        return true;
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
