package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Npy;
import io.samstream.testkit.Fixtures;
import io.samstream.testkit.TestModels;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The streaming CPU reference against Meta's SAM2VideoPredictor on the committed tiny fixtures
 * (tools/sam2_fixtures/make_sam2_fixtures.py): 12 frames, object 1 from a box on frame 0, object 2 from a point
 * on frame 5. {@code tiny}: read through the checkpoint loader from Meta's torch.save file, objects visible;
 * {@code tiny_absent}: the same weights without the object-score shift, regenerated here, every object absent
 * (masks at -1024, the no-object pointer and memory). Bounds: mask IoU >= 0.99 per frame, object-score sign equal
 * and within 1e-4, pointer cosine >= 0.999, frame-0 features within 2e-4 relative.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class Sam2ReferenceParityTest {
    static final Path DIR = TestModels.tinySam2Dir();
    static final Path ABSENT = Fixtures.gpuFixture("sam2/tiny_absent");
    static final Sam2Config.Layout TINY = new Sam2Config.Layout("tiny fixture", 1, new int[] {2},
            new int[] {8, 4, 6, 2}, 128, 2);
    static final int THREADS = Math.max(2, Runtime.getRuntime().availableProcessors());

    private Sam2Model visibleModel;
    private Sam2Model absentModel;
    private FixtureRun visible;
    private FixtureRun absent;

    @BeforeAll
    void run() throws IOException {
        StateDict sd = CheckpointLoader.load(DIR.resolve("checkpoint.pt"));
        visibleModel = new Sam2Model(sd, Sam2ConfigInference.infer(sd, TINY), THREADS);
        visible = new FixtureRun(DIR, visibleModel);
        StateDict regenerated = DeterministicWeights.fromKeyList(ABSENT.resolve("keys.txt"), Map.of());
        absentModel = new Sam2Model(regenerated, Sam2ConfigInference.infer(regenerated, TINY), THREADS);
        absent = new FixtureRun(ABSENT, absentModel);
    }

    @AfterAll
    void close() {
        if (visibleModel != null) {
            visibleModel.close();
        }
        if (absentModel != null) {
            absentModel.close();
        }
    }

    @Test
    void clipIsTheFixturesClip() throws IOException {
        assertArrayEquals(Npy.read(DIR.resolve("frame0_rgb.npy")).raw(), SyntheticClip.frame(0, 128));
    }

    @Test
    void visibleObjects() throws IOException {
        visible.checkFeatures(2e-4f);
        visible.checkMemories();
        visible.checkFrames(1e-4);
        assertTrue(visible.results.stream().flatMap(f -> f.stream()).allMatch(ObjectResult::visible));
    }

    @Test
    void absentObjects() throws IOException {
        absent.checkFeatures(2e-4f);
        absent.checkMemories();
        absent.checkFrames(1e-4);
        for (var frame : absent.results) {
            for (ObjectResult r : frame) {
                assertTrue(!r.visible() && Arrays.stream(toDoubles(r.lowResLogits())).allMatch(v -> v == -1024));
            }
        }
    }

    private static double[] toDoubles(float[] x) {
        double[] d = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            d[i] = x[i];
        }
        return d;
    }
}
