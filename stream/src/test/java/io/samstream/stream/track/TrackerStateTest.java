package io.samstream.stream.track;

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
        t.bad(true);
        TrackerState s = new TrackerState(40, 3, 41, 4, List.of(t.export()), Map.of(2, 5L));
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
        assertArrayEquals(t.box(), r.box());
        assertArrayEquals(t.filter().exportState(), r.filter().exportState());
        assertArrayEquals(new int[] {1, 64, 64}, r.lowResLogits().shape());
        float[] got = r.lowResLogits().data();
        for (int i = 0; i < logits.length; i++) {
            assertEquals(logits[i], got[i], 1.0 / 512 + 1e-6, "logit " + i);
            assertEquals(logits[i] > 0, got[i] > 0, "the mask's sign at " + i);
        }
        int float32Base64 = logits.length * 4 * 4 / 3;
        assertTrue(json.length() < float32Base64 / 2, "logits at least 2x smaller than float32 in base64 ("
                + float32Base64 + "): " + json.length() + " characters");
    }

    @Test
    void aDamagedStateIsOneClearError() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TrackerState.fromJson(
                new ObjectMapper().readTree("{\"frame\":1,\"tracks\":[{\"id\":1}]}")));
        assertTrue(e.getMessage().startsWith("unreadable tracker state"), e.getMessage());
    }
}
