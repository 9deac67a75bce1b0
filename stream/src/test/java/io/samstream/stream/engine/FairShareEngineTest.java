package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.sam2.Sam2Model;
import io.samstream.testkit.TestModels;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Memory mode on the CPU with the tiny SAM 2.1 of the gpu fixtures (the examples' demo model takes seconds a
 * heavy step on 2 cores): a light live stream (1 object) beside a heavy one (many
 * objects). Without fair sharing every micro-batch holds a heavy step, so the light stream runs at the heavy one's
 * pace; with it the light stream gets half the model time and steps many times as often, while the heavy stream,
 * held back, drops its own old frames.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FairShareEngineTest {
    static final Path SAM2 = TestModels.tinySam2();
    static final int W = 128;
    static final int H = 96;
    /** Both cameras at 100 frames/s: more than either stream gets, so both are always backlogged. */
    static final double FPS = 100;
    static final int HEAVY_OBJECTS = 24;
    static final long WARM_UP_MS = 2_000;
    static final long MEASURE_MS = 8_000;

    private Sam2Model model;

    @BeforeAll
    void load() {
        model = ModelCheckpoints.openSam2(SAM2, 2);
    }

    @AfterAll
    void close() {
        model.close();
    }

    /** Frames published in the window: light, heavy; and the heavy stream's dropped frames. */
    private record Run(long light, long heavy, long heavyDropped) {}

    private Run run(boolean fair) throws Exception {
        CollectingSink sink = new CollectingSink();
        try (Engine engine = new Engine(MemoryModeEngineTest.settings().withFairShare(fair),
                Segmenter.memory(model, "sam2-demo"),
                spec -> new TestPatternSource(spec.id(), W, H, FPS, TestPatternSource.ENDLESS, 3, true), sink,
                EngineMetrics.inMemory())) {
            StreamHandle light = engine.add(TestSources.spec("light", "testpattern:128x96@100", true,
                    new PromptSpec(List.of(new ObjectPrompt(1, null, new double[] {20, 20, 60, 60})), 0)));
            StreamHandle heavy = engine.add(TestSources.spec("heavy", "testpattern:128x96@100", true, heavyPrompts()));
            Thread.sleep(WARM_UP_MS);
            long l0 = light.published(), h0 = heavy.published(), d0 = heavy.dropped();
            Thread.sleep(MEASURE_MS);
            Run r = new Run(light.published() - l0, heavy.published() - h0, heavy.dropped() - d0);
            System.out.printf("fair share %s: light %d frames (%.1f/s), heavy %d (%.1f/s), heavy dropped %d%n",
                    fair ? "on" : "off", r.light, r.light * 1000.0 / MEASURE_MS, r.heavy, r.heavy * 1000.0 / MEASURE_MS,
                    r.heavyDropped);
            assertEquals(StreamHandle.State.RUNNING, light.state());
            assertEquals(StreamHandle.State.RUNNING, heavy.state());
            return r;
        }
    }

    /** {@link #HEAVY_OBJECTS} small boxes on a grid. */
    private static PromptSpec heavyPrompts() {
        List<ObjectPrompt> objects = new ArrayList<>();
        for (int i = 0; i < HEAVY_OBJECTS; i++) {
            double x = 4 + (i % 8) * 15, y = 4 + (i / 8) * 15;
            objects.add(new ObjectPrompt(i + 1, null, new double[] {x, y, x + 12, y + 12}));
        }
        return new PromptSpec(objects, 0);
    }

    @Test
    void aHeavyStreamSlowsItselfNotALightOne() throws Exception {
        Run unfair = run(false);
        Run fair = run(true);
        assertTrue(unfair.light > 0 && fair.heavy > 0, "both streams published: " + unfair + " " + fair);
        // Expected about (heavy + light step) / (2 light steps): about 8 with 24 objects; 2 holds on a loaded machine.
        assertTrue(fair.light >= 2 * unfair.light, "the light stream steps at least twice as often with fair sharing: "
                + fair.light + " frames against " + unfair.light);
        assertTrue(3 * fair.heavy >= unfair.heavy, "the heavy stream slows down, it is not starved: " + fair.heavy
                + " frames against " + unfair.heavy);
        assertTrue(fair.heavyDropped > fair.heavy, "the held-back heavy stream drops its own frames: "
                + fair.heavyDropped + " dropped, " + fair.heavy + " published");
    }
}
