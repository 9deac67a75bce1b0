package io.samstream.gpu.cuda.sam2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2ConfigInference;
import io.samstream.gpu.sam2.Sam2Shapes;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the CUDA SAM 2.1 parts can run, told before any GPU work (no GPU needed). */
class CudaSam2OffloadTest {
    @Test
    void everyReleaseRuns() {
        for (Sam2ConfigInference.Released r : Sam2ConfigInference.RELEASES) {
            assertEquals(List.of(), CudaSam2Offload.unsupported(Sam2Shapes.release(r.layout().name())), r.layout().name());
        }
    }

    @Test
    void anUnsupportedShapeIsNamed() {
        Sam2Config tiny = Sam2Shapes.release("hiera_tiny");
        Sam2Config.Layout threeHeads = new Sam2Config.Layout("three heads", 1, new int[] {5, 7, 9},
                new int[] {8, 4, 14, 7}, 1024, 3);
        Sam2Config odd = new Sam2Config(1024, 96, tiny.stages(), 256, 60, 7, 4, 2048, 2048, 256, 4, 3, 2, 7, threeHeads);
        List<String> problems = CudaSam2Offload.unsupported(odd);
        assertTrue(problems.stream().anyMatch(p -> p.startsWith("memory attention head dim 256/3")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.startsWith("memory width 60")), problems.toString());
    }
}
