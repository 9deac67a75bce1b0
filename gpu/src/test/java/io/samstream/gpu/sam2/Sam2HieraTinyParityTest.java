package io.samstream.gpu.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The same comparison at sam2.1_hiera_tiny's shapes (input 1024, windows 8/4/14/7, global blocks 5/7/9,
 * hidden 256, memory 64), against outputs Meta's predictor made on the GPU machine (fp32, TF32 off) with the
 * deterministic weights regenerated here. The fixture (12 MB) is not committed: make it with
 * {@code make_sam2_fixtures.py --config hiera_t --out DIR} and point {@code -Dsamstream.fixtures.sam2Hiera=DIR}
 * (or SAMSTREAM_SAM2_HIERA_FIXTURE) at it. It takes minutes on a few cores.
 */
class Sam2HieraTinyParityTest {
    /** The hiera_tiny fixture's folder; the calling test is skipped, with the reason, when none is set. */
    static Path fixture() {
        String where = System.getProperty("samstream.fixtures.sam2Hiera", System.getenv("SAMSTREAM_SAM2_HIERA_FIXTURE"));
        Assumptions.assumeTrue(where != null && Files.isDirectory(Path.of(where)),
                "no hiera_tiny fixture (set -Dsamstream.fixtures.sam2Hiera=DIR or SAMSTREAM_SAM2_HIERA_FIXTURE; see "
                        + "tools/sam2_fixtures)");
        return Path.of(where);
    }

    @Test
    void hieraTinyShapes() throws Exception {
        Path dir = fixture();
        StateDict sd = DeterministicWeights.fromKeyList(dir.resolve("keys.txt"), Map.of());
        Sam2Config config = Sam2ConfigInference.infer(sd);
        try (Sam2Model model = new Sam2Model(sd, config, Sam2ReferenceParityTest.THREADS)) {
            FixtureRun run = new FixtureRun(dir, model);
            run.checkFeatures(5e-4f);
            run.checkMemories();
            run.checkFrames(1e-3);
        }
    }
}
