package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaAvailability;
import io.samstream.gpu.cuda.CudaSam2Offload;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The streaming video model with its image encoder, memory attention and memory encoder on the GPU in bf16
 * ({@link CudaSam2Offload}; the mask decoder on the CPU) against Meta's predictor's fixtures: every frame's mask IoU
 * >= 0.98 at the model's size (the GPU parity), object-score signs equal, pointers close. The tiny fixtures
 * (visible and absent objects) are in the repository; the hiera_tiny one is made on the GPU machine
 * (SAMSTREAM_SAM2_HIERA_FIXTURE, see Sam2HieraTinyParityTest).
 */
@Tag("gpu")
class Sam2CudaParityGpuTest {
    static final Path FIXTURES = Path.of(System.getProperty("samstream.fixtures", "src/test/resources/fixtures"));
    private static final double MIN_IOU = 0.98, MIN_COS = 0.99, SCORE_TOL = 0.25;

    @BeforeEach
    void requireGpu() {
        CudaAvailability a = CudaAvailability.probe();
        Assumptions.assumeTrue(a.available(), "GPU tests skipped: " + a.reason());
    }

    @Test
    void tinyVisibleObjects() throws Exception {
        StateDict sd = CheckpointLoader.load(FIXTURES.resolve("sam2/tiny/checkpoint.pt"));
        run(FIXTURES.resolve("sam2/tiny"), sd, Sam2ConfigInference.infer(sd, Sam2ReferenceParityTest.TINY));
    }

    @Test
    void tinyAbsentObjects() throws Exception {
        Path dir = FIXTURES.resolve("sam2/tiny_absent");
        StateDict sd = DeterministicWeights.fromKeyList(dir.resolve("keys.txt"), Map.of());
        run(dir, sd, Sam2ConfigInference.infer(sd, Sam2ReferenceParityTest.TINY));
    }

    @Test
    void hieraTinyShapes() throws Exception {
        Path dir = Sam2HieraTinyParityTest.fixture();
        StateDict sd = DeterministicWeights.fromKeyList(dir.resolve("keys.txt"), Map.of());
        run(dir, sd, Sam2ConfigInference.infer(sd));
    }

    private static void run(Path dir, StateDict sd, Sam2Config config) throws Exception {
        try (Sam2Model model = new Sam2Model(sd, config, Sam2ReferenceParityTest.THREADS,
                CudaSam2Offload.open(sd, config, 0))) {
            System.out.println(dir.getFileName() + ": " + model.describe());
            new FixtureRun(dir, model).checkFrames(SCORE_TOL, MIN_IOU, MIN_COS);
        }
    }
}
