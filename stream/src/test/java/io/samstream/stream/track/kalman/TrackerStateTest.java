package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.tensor.Tensor;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A tracker's state survives JSON (what the state topic carries): ids, filter, logits to 1/256. */
class TrackerStateTest {
    @Test
    void roundTripsThroughJsonKeepingTracksAndFilterState() throws Exception {
        // Like a mask's logits: a smooth blob (positive inside), with a little noise.
        SplittableRandom rnd = new SplittableRandom(7);
        float[] logits = new float[64 * 64];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) (12 - Math.hypot(i % 64 - 30, i / 64 - 34) + rnd.nextDouble() * 0.01);
        }
        Track t = new Track(1000003, Track.Origin.DISCOVERED, -1, 12, new Tensor(logits, 1, 64, 64),
                new double[] {5, 6, 40, 50});
        t.filter().predict();
        t.measured(new Tensor(logits, 1, 64, 64), new double[] {7, 8, 41, 52});
        t.bad(true, true);
        float[] look = new float[256];
        for (int i = 0; i < look.length; i++) {
            look[i] = (float) rnd.nextGaussian() * 0.37f;
        }
        t.remember(look, 1234, true);
        Track lost = new Track(8, Track.Origin.PROMPTED, 6, 3, new Tensor(logits, 1, 64, 64), new double[] {1, 2, 9, 9});
        TrackerState s = new TrackerState(40, 3, 41, 4, List.of(t.export()), Map.of(2, 5L),
                List.of(new TrackerState.GhostState(lost.export(), 37)));
        String json = new ObjectMapper().writeValueAsString(s.toJson());
        TrackerState back = TrackerState.fromJson(new ObjectMapper().readTree(json));
        assertEquals(List.of(1000003), back.ids());
        assertEquals(Map.of(2, 5L), back.ended());
        assertEquals(40, back.frame());
        assertEquals(3, back.generation());
        assertEquals(4, back.discovered());
        Track r = Track.restore(back.tracks().get(0));
        assertEquals(Track.Origin.DISCOVERED, r.origin());
        assertEquals(12, r.bornFrame());
        assertEquals(1, r.badFrames());
        assertEquals(0, r.unexplainedBadFrames());
        assertEquals(1, r.coveredBadFrames(), "a covered bad frame");
        assertArrayEquals(t.box(), r.box());
        assertArrayEquals(t.filter().exportState(), r.filter().exportState());
        assertArrayEquals(new int[] {1, 64, 64}, r.lowResLogits().shape());
        assertTrue(r.remembers(), "its appearance memory");
        assertArrayEquals(look, back.tracks().get(0).seedLook(), "exactly (compared against thresholds)");
        assertArrayEquals(look, back.tracks().get(0).look());
        assertEquals(1234, r.area());
        assertEquals(1234, r.clearArea());
        assertEquals(1, back.ghosts().size());
        assertEquals(37, back.ghosts().get(0).lostFrame());
        assertEquals(8, back.ghosts().get(0).track().id());
        assertEquals(null, back.ghosts().get(0).track().seedLook(), "a track with no memory yet");
        float[] got = r.lowResLogits().data();
        for (int i = 0; i < logits.length; i++) {
            assertEquals(logits[i], got[i], 1.0 / 512 + 1e-6, "logit " + i);
            assertEquals(logits[i] > 0, got[i] > 0, "the mask's sign at " + i);
        }
        int float32Base64 = logits.length * 4 * 4 / 3;
        int stored = new ObjectMapper().readTree(json).get("tracks").get(0).get("logits").asText().length();
        assertTrue(stored < float32Base64 / 2, "logits at least 2x smaller than float32 in base64 ("
                + float32Base64 + "): " + stored + " characters");
    }

    /**
     * A state written before appearance memory, ghosts and covered frames were kept: tracks without memory, no
     * ghosts, no covered frames counted.
     */
    @Test
    void anOlderStateReadsAsTracksWithoutMemory() throws Exception {
        Track t = new Track(3, Track.Origin.PROMPTED, 1, 0, new Tensor(new float[16], 1, 4, 4), new double[] {0, 0, 4, 4});
        t.bad(true, true);
        com.fasterxml.jackson.databind.node.ObjectNode o =
                new TrackerState(5, 0, 6, 0, List.of(t.export()), Map.of(), List.of()).toJson();
        o.remove("ghosts");
        ((com.fasterxml.jackson.databind.node.ObjectNode) o.get("tracks").get(0)).remove(List.of("area", "clear_area", "covered"));
        TrackerState back = TrackerState.fromJson(o);
        assertEquals(List.of(3), back.ids());
        assertTrue(back.ghosts().isEmpty());
        assertEquals(false, Track.restore(back.tracks().get(0)).remembers());
        assertEquals(0, Track.restore(back.tracks().get(0)).coveredBadFrames());
        assertEquals(1, Track.restore(back.tracks().get(0)).badFrames());
    }

    @Test
    void aDamagedStateIsOneClearError() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TrackerState.fromJson(
                new ObjectMapper().readTree("{\"frame\":1,\"tracks\":[{\"id\":1}]}")));
        assertTrue(e.getMessage().startsWith("unreadable tracker state"), e.getMessage());
    }
}
