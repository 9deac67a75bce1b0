package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3Backend;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.Sam3Weights;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A video model's tracker passes from a factory (what puts them on a GPU): its streams run them, its description names
 * where they run, and closing the model closes them; without a factory the CPU reference runs them.
 */
class TrackerPassesFactoryTest {
    /** The CPU reference's passes, counted, described as somewhere else. */
    private static final class Counted implements TrackerPasses {
        private final TrackerPasses cpu;
        int propagations, memories, closes;

        Counted(TrackerPasses cpu) {
            this.cpu = cpu;
        }

        @Override
        public Sam3TrackerConfig config() {
            return cpu.config();
        }

        @Override
        public TrackerFrame features(CpuThreadPool pool, FeatureMap[] levels) {
            return cpu.features(pool, levels);
        }

        @Override
        public Propagation propagate(CpuThreadPool pool, TrackerFrame f, List<Sam3TrackerModel.Spatial> spatial,
                List<Sam3TrackerModel.Pointer> pointers, int pointerWindow) {
            propagations++;
            return cpu.propagate(pool, f, spatial, pointers, pointerWindow);
        }

        @Override
        public float[] pointerFromMask(CpuThreadPool pool, TrackerFrame f, boolean[] mask) {
            return cpu.pointerFromMask(pool, f, mask);
        }

        @Override
        public FeatureMap encodeMemory(CpuThreadPool pool, TrackerFrame f, float[] scaledMask, boolean present) {
            memories++;
            return cpu.encodeMemory(pool, f, scaledMask, present);
        }

        @Override
        public String describe() {
            return "a test device";
        }

        @Override
        public void close() {
            closes++;
        }
    }

    private static final StateDict SD = Sam3Weights.videoStateDict(Sam3Weights.TINY, Sam3Weights.TINY_TRACKER);

    @Test
    void theStreamsRunTheFactorysPassesAndTheModelClosesThem() {
        Counted[] opened = new Counted[1];
        Sam3VideoModel model = new Sam3VideoModel(SD, tokenizer(), 2, Sam3Backend.cpu(), (sd, config, cpu) -> {
            assertEquals(Sam3Weights.TINY_TRACKER, config);
            opened[0] = new Counted(cpu);
            return opened[0];
        });
        Counted passes = opened[0];
        assertSame(passes, model.trackerPasses());
        assertTrue(model.describe().startsWith("detector: ") && model.describe().endsWith("; tracker: a test device"),
                model.describe());
        ScriptedDetector d = ScriptedDetector.moving(32, Map.of("red circle", new ScriptedDetector.Box(6, 6, 16, 16,
                0.9f)), 1, 0);
        Sam3VideoTracker stream = model.openStream(Sam3VideoSettings.withoutTemporalDisambiguation(), d);
        float[] input = new float[3 * 112 * 112];
        for (int t = 0; t < 3; t++) {
            d.frame = t;
            stream.step(input, 40, 30, List.of(Concept.of("red circle")));
        }
        assertTrue(passes.propagations > 0 && passes.memories > 0, passes.propagations + " propagations, "
                + passes.memories + " memories");
        model.close();
        assertEquals(1, passes.closes);
    }

    @Test
    void withoutAFactoryTheCpuReferenceRunsThePasses() {
        try (Sam3VideoModel model = new Sam3VideoModel(SD, tokenizer(), 2)) {
            assertSame(model.tracker(), model.trackerPasses());
            assertTrue(model.describe().endsWith("; tracker: CPU (fp32)"), model.describe());
        }
    }

    @Test
    void aFactoryThatFailsFailsTheModel() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new Sam3VideoModel(SD,
                tokenizer(), 2, Sam3Backend.cpu(), (sd, config, cpu) -> {
                    throw new IllegalArgumentException("no such device");
                }));
        assertEquals("no such device", e.getMessage());
    }

    private static Sam3Tokenizer tokenizer() {
        return Sam3Tokenizer.load(ConceptTrackingTest.VOCAB);
    }
}
