package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.DecodeOnlyBackend;
import io.samstream.stream.track.FixedPrompts;
import io.samstream.stream.track.StreamTracker;
import io.samstream.stream.track.TrackingMeters;
import io.samstream.stream.track.WaveTracker;
import io.samstream.stream.track.kalman.KalmanTracking;
import io.samstream.stream.track.kalman.ObjectTracker;
import io.samstream.stream.track.memory.MemoryTracker;
import io.samstream.stream.track.memory.MemoryTrackerState;
import io.samstream.stream.track.memory.MemoryTracking;
import io.samstream.stream.track.memory.ScriptedSam2;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link GpuLane#tracking}: the one place a lane's tracking mode is chosen, and what each mode's trackers are. */
class GpuLaneTrackingTest {
    static final SamConfig TINY = new SamConfig(64, 8, 32, 4, 2, 64, 4, new int[] {1, 3}, 32, 8, 2, 8, 64, 2, 3, 3, 32);
    static final EngineSettings.Tracking ON = new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30);
    static final DecodeOnlyBackend SAM = new DecodeOnlyBackend(TINY, "sam") {
        @Override
        public DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask) {
            throw new UnsupportedOperationException("nothing is decoded here");
        }
    };

    @Test
    void samTracksInKalmanModeWhenTrackingIsOnElseWithFixedPrompts() {
        GpuLane lane = new GpuLane(0, new Segmenter(SAM, "sam"), Optional.empty());
        assertInstanceOf(KalmanTracking.class, lane.tracking(ON));
        try (StreamTracker t = lane.tracking(ON).open("s", TrackingMeters.none())) {
            assertInstanceOf(ObjectTracker.class, t);
        }
        assertInstanceOf(FixedPrompts.class, lane.tracking(EngineSettings.Tracking.off()));
        try (StreamTracker t = lane.tracking(EngineSettings.Tracking.off()).open("s", TrackingMeters.none())) {
            assertInstanceOf(WaveTracker.class, t);
            assertTrue(t.stateAfter(3).isEmpty(), "fixed prompts keep no state");
            t.keepStateEvery(1);
            assertTrue(t.takeState(3).isEmpty());
        }
    }

    @Test
    void aSam2ModelTracksInMemoryModeWhateverTheTrackingSettingsSay() {
        ScriptedSam2 model = new ScriptedSam2(null, (id, step) -> null, 0);
        GpuLane lane = new GpuLane(-1, Segmenter.memory(model, "sam2"), Optional.empty());
        assertInstanceOf(MemoryTracking.class, lane.tracking(ON));
        try (StreamTracker t = lane.tracking(ON).open("s", TrackingMeters.none())) {
            assertInstanceOf(MemoryTracker.class, t);
        }
    }

    @Test
    void aStoredStateOfAnotherModeIsNotTakenUp() {
        MemoryTrackerState memory = new MemoryTrackerState(9, 0, List.of(new MemoryTrackerState.ObjectState(4, 1,
                new double[] {1, 2, 30, 40}, 0)), Map.of());
        try (StreamTracker kalman = new GpuLane(0, new Segmenter(SAM, "sam"), Optional.empty()).tracking(ON)
                .open("s", TrackingMeters.none())) {
            kalman.takeUp(memory);
            assertEquals(List.of(), ((ObjectTracker) kalman).tracks(), "its tracks start afresh");
            assertEquals(List.of(), kalman.stateAfter(0).orElseThrow().ids());
        }
    }
}
