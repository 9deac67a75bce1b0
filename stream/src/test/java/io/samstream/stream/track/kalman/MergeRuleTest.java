package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.record.MaskRecord.ObjectMask;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.DecodeOnlyBackend;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The merge rule on a scripted scene (a fake backend in {@link WaveTest}'s style, so the crossing is exact): two
 * look-alike squares, B still, A moving right through it. While they nearly coincide the "decoder" cannot tell
 * them apart and gives both prompts the union, as SAM does for look-alikes in contact.
 */
class MergeRuleTest {
    static final int L = 64; // low-res side; the frame is 2 L pixels square (2 px per low-res cell)
    static final int SIZE = 2 * L;
    static final SamConfig CONFIG = new SamConfig(SIZE, 8, 32, 4, 2, 64, 4, new int[] {1, 3}, 32, 8, 2, 8, 64, 2, 3,
            3, 32);
    static final EngineSettings.Tracking SETTINGS = new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30);
    static final int HALF = 5;
    static final int CY = 32;
    static final int FRAMES = 16;

    /** Low-res centre x of object 0 (B, still) and 1 (A, moving) in frame t. */
    static int cx(int object, int t) {
        return object == 0 ? 36 : 8 + 3 * t;
    }

    /** The frame's index is the embedding's first value. */
    static Tensor embedding(int t) {
        float[] v = new float[32 * 16 * 16];
        v[0] = t;
        return new Tensor(v, 1, 32, 16, 16);
    }

    /** Decodes a prompt to the square nearest its box's centre, or to both when the two nearly coincide. */
    static final class CrossingBackend extends DecodeOnlyBackend {
        CrossingBackend() {
            super(CONFIG, "crossing");
        }

        @Override
        public DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask) {
            int t = (int) embedding.data()[0];
            double x = (prompt.box()[0] + prompt.box()[2]) / 4; // model px -> low-res
            boolean together = Math.abs(cx(0, t) - cx(1, t)) < 3;
            int nearest = Math.abs(x - cx(0, t)) <= Math.abs(x - cx(1, t)) ? 0 : 1;
            float[] v = new float[L * L];
            java.util.Arrays.fill(v, -8);
            for (int k = 0; k < 2; k++) {
                if (together || k == nearest) {
                    for (int r = CY - HALF; r < CY + HALF; r++) {
                        for (int c = cx(k, t) - HALF; c < cx(k, t) + HALF; c++) {
                            v[r * L + c] = 8;
                        }
                    }
                }
            }
            return new DecoderOutput(new Tensor(v, 1, L, L), new float[] {0.9f});
        }
    }

    static ObjectPrompt boxOf(int id, int object, int t) {
        return new ObjectPrompt(id, null, new double[] {2 * (cx(object, t) - HALF), 2 * (CY - HALF),
            2 * (cx(object, t) + HALF), 2 * (CY + HALF)});
    }

    static TrackPrompts prompts(ObjectPrompt... objects) {
        List<TrackPrompts.Seed> seeds = new ArrayList<>();
        for (ObjectPrompt o : objects) {
            seeds.add(new TrackPrompts.Seed(o, 0));
        }
        return new TrackPrompts(seeds, 0);
    }

    /** The centre x (low-res) of a published mask's box. */
    static double centre(ObjectMask o) {
        return (o.box().x0() + o.box().x1()) / 4.0;
    }

    @Test
    void twoEstablishedObjectsThatCrossKeepTheirIdsAndANewDuplicateIsReportedLost() {
        ObjectTracker tracker = new ObjectTracker("x", new CrossingBackend(), SETTINGS, null, TrackingMeters.none());
        TrackPrompts p = prompts(boxOf(0, 0, 0), boxOf(1, 1, 0));
        Set<Integer> hiddenSeen = new HashSet<>();
        for (int t = 0; t < FRAMES; t++) {
            TrackedFrame f = tracker.step(t, SIZE, SIZE, embedding(t), p);
            Map<Integer, ObjectMask> byId = new TreeMap<>();
            f.objects().forEach(o -> byId.put(o.id(), o));
            assertEquals(List.of(), f.lost(), "frame " + t + ": nothing ends at the crossing");
            Set<Integer> tracked = new HashSet<>(byId.keySet());
            tracked.addAll(f.hidden());
            assertEquals(Set.of(0, 1), tracked, "frame " + t + ": both ids are published or coasting");
            hiddenSeen.addAll(f.hidden());
            if (Math.abs(cx(0, t) - cx(1, t)) >= 6) {
                // Apart: each id is published on its own square.
                assertEquals(Set.of(0, 1), byId.keySet(), "frame " + t);
                for (int k = 0; k < 2; k++) {
                    assertEquals(cx(k, t), centre(byId.get(k)), 0.6, "frame " + t + ": object " + k);
                }
            }
        }
        assertTrue(!hiddenSeen.isEmpty(), "at the crossing one of them coasts (it took a bad frame)");

        // A new prompt on B is a duplicate of the established object 0: merged into it and reported lost.
        int t = FRAMES;
        TrackedFrame f = tracker.step(t, SIZE, SIZE, embedding(t),
                prompts(boxOf(0, 0, 0), boxOf(1, 1, 0), boxOf(2, 0, t)));
        assertEquals(List.of(2), f.lost());
        assertEquals(List.of(0, 1), f.objects().stream().map(ObjectMask::id).toList());
        f = tracker.step(t + 1, SIZE, SIZE, embedding(t + 1), prompts(boxOf(0, 0, 0), boxOf(1, 1, 0), boxOf(2, 0, t)));
        assertEquals(List.of(), f.lost(), "reported once, not seeded again under the same prompt");
        assertEquals(List.of(0, 1), f.objects().stream().map(ObjectMask::id).toList());
    }
}
