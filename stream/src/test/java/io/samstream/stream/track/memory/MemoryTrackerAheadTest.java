package io.samstream.stream.track.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.sam2.ObjectResult;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Model;
import io.samstream.gpu.sam2.Sam2Tracking;
import io.samstream.stream.track.MaskReadout;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link MemoryTracker#prepareAhead}: a stream's consecutive frames prepared before the ones before them are finished,
 * so that the model takes them in one call (the engine on a GPU), give what stepping frame by frame gives, through
 * hiding, loss, memory kept and found again, forgetting, prompts added and resets; a frame that finishing the earlier
 * ones could change waits. The model is {@link ScriptedSam2}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MemoryTrackerAheadTest {
    static final int W = 128;
    static final int H = 96;
    static final int FRAMES = 40;
    static final int[] LEFT = {1, 1, 5, 5};
    static final int[] RIGHT = {8, 8, 14, 14};

    private Sam2Config config;
    private final TestPatternSource clip = new TestPatternSource("clip", W, H, 10, FRAMES, 3, false);

    @BeforeAll
    void load() {
        try (Sam2Model m = ModelCheckpoints.openSam2(MemoryTrackerTest.SAM2_TINY, 1)) {
            config = m.config();
        }
    }

    private static TrackPrompts prompts(long generation, long[] revisions) {
        List<TrackPrompts.Seed> seeds = new ArrayList<>();
        for (int id = 1; id <= revisions.length; id++) {
            if (revisions[id - 1] > 0) {
                seeds.add(new TrackPrompts.Seed(new ObjectPrompt(id, null, new double[] {10 + id, 10, 60 + id, 60}),
                        revisions[id - 1]));
            }
        }
        return new TrackPrompts(seeds, generation);
    }

    /**
     * Object 1 visible on its steps 0-1 and 14-30, absent between (lost, kept, found again); object 2 always visible;
     * object 3 (added on frame 6) visible on its steps 0-2 only (lost, then forgotten or not by the window). A reset
     * on frame 33.
     */
    private static ScriptedSam2.Script script() {
        return (id, step) -> switch (id) {
            case 1 -> step < 2 || (step >= 14 && step <= 30) ? LEFT : null;
            case 2 -> RIGHT;
            default -> step < 3 ? new int[] {1, 9, 5, 14} : null;
        };
    }

    private static TrackPrompts promptsOf(int frame) {
        return frame < 6 ? prompts(0, new long[] {1, 1}) : frame < 33 ? prompts(0, new long[] {1, 1, 2})
                : prompts(1, new long[] {3, 3});
    }

    private static String describe(TrackedFrame f) {
        StringBuilder b = new StringBuilder();
        for (MaskReadout.Readout r : f.masks()) {
            b.append(r.id()).append(':').append(r.score()).append(':').append(r.summary().area())
                    .append(Arrays.toString(r.box())).append(' ');
        }
        return b.append("hidden ").append(f.hidden()).append(" lost ").append(f.lost()).toString();
    }

    private List<String> frameByFrame(int forgetAfter, IntFunction<TrackPrompts> prompts) {
        ScriptedSam2 model = new ScriptedSam2(config, script(), 8);
        MemoryTracker t = new MemoryTracker("s", model, 3, forgetAfter, 2, TrackingMeters.none());
        List<String> out = new ArrayList<>();
        for (int f = 0; f < FRAMES; f++) {
            out.add(describe(t.step(f, W, H, clip.render(f), prompts.apply(f))));
        }
        return out;
    }

    /** As the engine does on a GPU: up to {@code k} frames prepared ahead, one model call, then each finished. */
    private List<String> ahead(int forgetAfter, IntFunction<TrackPrompts> prompts, int k, int[] calls) {
        ScriptedSam2 model = new ScriptedSam2(config, script(), 8);
        MemoryTracker t = new MemoryTracker("s", model, 3, forgetAfter, 2, TrackingMeters.none());
        String[] out = new String[FRAMES];
        int f = 0;
        while (f < FRAMES) {
            List<MemoryTracker.Pending> unfinished = new ArrayList<>();
            List<Integer> frames = new ArrayList<>();
            int end = Math.min(FRAMES, (f / k + 1) * k); // a micro-batch of k frames
            while (f < end) {
                MemoryTracker.Pending p = t.prepareAhead(unfinished, f, W, H, clip.render(f), prompts.apply(f));
                if (p == null) {
                    assertTrue(!unfinished.isEmpty(), "frame " + f + ": the first frame of a call is always prepared");
                    break;
                }
                if (p.done() != null) {
                    out[f] = describe(p.done());
                } else {
                    unfinished.add(p);
                    frames.add(f);
                }
                f++;
            }
            if (unfinished.isEmpty()) {
                continue;
            }
            calls[0]++;
            calls[1] = Math.max(calls[1], unfinished.size());
            List<Sam2Tracking.StreamTracker> streams = new ArrayList<>();
            List<byte[]> rgb = new ArrayList<>();
            List<List<io.samstream.gpu.sam2.ObjectPrompt>> ps = new ArrayList<>();
            for (MemoryTracker.Pending p : unfinished) {
                streams.add(p.stream());
                rgb.add(p.square());
                ps.add(p.prompts());
            }
            List<List<ObjectResult>> results = model.track(streams, rgb, ps);
            for (int i = 0; i < unfinished.size(); i++) {
                out[frames.get(i)] = describe(t.finish(unfinished.get(i), results.get(i)));
            }
        }
        return List.of(out);
    }

    @Test
    void framesPreparedAheadGiveWhatFrameByFrameGives() {
        for (int forgetAfter : new int[] {0, 6, 20}) {
            List<String> expected = frameByFrame(forgetAfter, MemoryTrackerAheadTest::promptsOf);
            for (int k : new int[] {2, 4, 8}) {
                int[] calls = new int[2];
                List<String> got = ahead(forgetAfter, MemoryTrackerAheadTest::promptsOf, k, calls);
                for (int f = 0; f < FRAMES; f++) {
                    assertEquals(expected.get(f), got.get(f), "forget-after " + forgetAfter + ", " + k
                            + " frames a call, frame " + f);
                }
                // Objects are lost after 3 hidden frames: with 3 frames unfinished any object could be lost by the
                // 4th, so at most 3 frames a call.
                assertEquals(Math.min(k, 3), calls[1], "forget-after " + forgetAfter + ": micro-batches of " + k
                        + " frames");
                assertTrue(calls[0] < FRAMES, calls[0] + " calls");
            }
        }
        // The scenario has what it is meant to have: loss, finding again, a reset.
        List<String> kept = frameByFrame(20, MemoryTrackerAheadTest::promptsOf);
        assertTrue(kept.get(4).endsWith("lost [1]"), kept.get(4));
        assertTrue(kept.subList(5, 33).stream().anyMatch(s -> s.startsWith("1:")), "object 1 found again: " + kept);
    }

    @Test
    void aFrameWaitsWhenFinishingTheOnesBeforeCouldChangeIt() {
        ScriptedSam2 model = new ScriptedSam2(config, script(), 8);
        MemoryTracker t = new MemoryTracker("s", model, 3, 0, 1, TrackingMeters.none());
        List<MemoryTracker.Pending> unfinished = new ArrayList<>();
        unfinished.add(t.prepareAhead(unfinished, 0, W, H, clip.render(0), promptsOf(0)));
        assertEquals(2, unfinished.get(0).prompts().size());
        MemoryTracker.Pending second = t.prepareAhead(unfinished, 1, W, H, clip.render(1), promptsOf(0));
        assertNotNull(second, "the same prompts: prepared ahead (its objects are those prompted on frame 0)");
        assertEquals(List.of(), second.prompts());
        assertNull(second.done());
        unfinished.add(second);
        assertNull(t.prepareAhead(unfinished, 2, W, H, clip.render(2), promptsOf(6)), "an object added");
        assertNull(t.prepareAhead(unfinished, 2, W, H, clip.render(2), promptsOf(33)), "a reset");
        assertNull(t.prepareAhead(unfinished, 2, W + 2, H, new byte[(W + 2) * H * 3], promptsOf(0)), "a new size");
        MemoryTracker.Pending third = t.prepareAhead(unfinished, 2, W, H, clip.render(2), promptsOf(0));
        assertNotNull(third);
        // Three frames unfinished and objects lost after 3 hidden frames: one may be lost by the time frame 3 comes.
        unfinished.add(third);
        assertNull(t.prepareAhead(unfinished, 3, W, H, clip.render(3), promptsOf(0)),
                "an object could be lost (its memory dropped) within the frames before");
    }

    /**
     * A caller that finishes frames on another thread passes every frame it has not seen finished: those finished
     * meanwhile are left out, so a frame after them is prepared as after finished frames (here with an object added,
     * which a frame prepared ahead could not have), and {@link MemoryTracker#lastFinished} says how far it got.
     */
    @Test
    void framesFinishedMeanwhileAreLeftOutOfTheUnfinished() {
        ScriptedSam2 model = new ScriptedSam2(config, script(), 8);
        MemoryTracker t = new MemoryTracker("s", model, 3, 0, 1, TrackingMeters.none());
        assertEquals(-1, t.lastFinished());
        List<MemoryTracker.Pending> seen = new ArrayList<>();
        seen.add(t.prepareAhead(seen, 0, W, H, clip.render(0), promptsOf(0)));
        seen.add(t.prepareAhead(seen, 1, W, H, clip.render(1), promptsOf(0)));
        assertNull(t.prepareAhead(seen, 2, W, H, clip.render(2), promptsOf(6)), "an object added: waits");
        List<List<ObjectResult>> results = model.track(List.of(seen.get(0).stream(), seen.get(1).stream()),
                List.of(seen.get(0).square(), seen.get(1).square()), List.of(seen.get(0).prompts(), List.of()));
        t.finish(seen.get(0), results.get(0));
        assertEquals(0, t.lastFinished());
        assertNull(t.prepareAhead(seen, 2, W, H, clip.render(2), promptsOf(6)), "frame 1 is still unfinished");
        t.finish(seen.get(1), results.get(1));
        assertEquals(1, t.lastFinished());
        MemoryTracker.Pending third = t.prepareAhead(seen, 2, W, H, clip.render(2), promptsOf(6));
        assertNotNull(third, "both frames before it finished: prepared, its new object with it");
        assertEquals(List.of(3), third.prompts().stream().map(io.samstream.gpu.sam2.ObjectPrompt::objectId).toList());
    }
}
