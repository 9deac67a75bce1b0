package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.bench.track.SyntheticClip.Shape;
import io.samstream.config.ConfigException;
import io.samstream.connectors.video.PatternPainter;
import io.samstream.connectors.video.PatternPainter.Kind;
import io.samstream.testkit.TestModels;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The harness on a 4-frame clip through the whole engine with the bundled demo model on the CPU. */
class TrackHarnessTest {
    @Test
    @Timeout(120)
    void boxPromptsReachTheEngineOnTheirFrameAndItsMasksComeBack() throws Exception {
        // A disc whole from frame 0; a box entering from the left, whole from frame 2.
        SyntheticClip clip = new SyntheticClip("tiny", 320, 240, 4, 30, 5, 0, List.of(
                new Shape(Kind.DISC, PatternPainter.paletteColour(0), 30, 220, 120, 1, 0),
                new Shape(Kind.BOX, PatternPainter.paletteColour(2), 28, -2, 110, 16, 0)));
        ClipTruth truth = clip.truth();
        assertEquals(2, truth.firstFullyVisible(1));
        try (TrackHarness h = new TrackHarness(TrackHarness.config(TestModels.demoSam(), "cpu", 0, ""))) {
            assertTrue(h.backendName().startsWith("cpu"), h.backendName());
            TrackHarness.ClipRun run = h.run(clip, TrackHarness.Mode.BOX);
            assertEquals(Map.of(0, 0, 1, 2), run.promptFrames());
            assertEquals(4, run.predictions().size());
            for (int t = 0; t < 4; t++) {
                assertEquals(t < 2 ? Set.of(0) : Set.of(0, 1), run.predictions().get(t).keySet(), "frame " + t);
            }
            // The demo model segments these shapes from their boxes (0.93 box mIoU on such scenes).
            assertTrue(RegionJaccard.of(run.predictions().get(0).get(0), truth.mask(0, 0)) > 0.8);
            assertTrue(RegionJaccard.of(run.predictions().get(2).get(1), truth.mask(1, 2)) > 0.8);
            // Discovery mode gives no prompts: without discovery in the engine nothing is found.
            TrackHarness.ClipRun none = h.run(clip.firstFrames(1), TrackHarness.Mode.DISCOVERY);
            assertEquals(Map.of(), none.promptFrames());
            if (!TrackHarness.knows("samstream.discovery")) {
                assertEquals(Map.of(), none.predictions().get(0));
            }
        }
    }

    @Test
    void anUnknownEngineKeyIsRejectedByName() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> TrackHarness.config(Path.of("x.pth"), "cpu", 1, "samstream.trackin.enabled = on"));
        assertTrue(e.getMessage().contains("samstream.trackin"), e.getMessage());
    }
}
