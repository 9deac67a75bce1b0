package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.checkpoint.StateDict;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The key sets of {@link Sam2Shapes} against a real checkpoint's (the tiny fixture, made by Meta's code). */
class Sam2ShapesTest {
    @Test
    void maskDecoderKeysAreTheCheckpointsWithItsShapes() {
        StateDict sd = ModelCheckpoints.load(Sam2CudaParityGpuTest.FIXTURES.resolve("sam2/tiny/checkpoint.pt"));
        Sam2Config config = ModelCheckpoints.sam2Config(sd);
        Map<String, int[]> shapes = Sam2Shapes.maskDecoder(config);
        assertTrue(shapes.size() > 100, "the mask decoder has " + shapes.size() + " tensors");
        for (Map.Entry<String, int[]> e : shapes.entrySet()) {
            assertTrue(sd.contains(e.getKey()), e.getKey() + " is not in the checkpoint");
            assertArrayEquals(sd.get(e.getKey()).shape(), e.getValue(), e.getKey());
        }
        // every tensor of the SAM heads is in the set
        for (String k : sd.keys()) {
            if (k.startsWith("sam_mask_decoder.") && !k.startsWith("sam_mask_decoder.conv_s")
                    || k.startsWith("sam_prompt_encoder.") || k.startsWith("obj_ptr_proj.") || k.equals("no_obj_ptr")) {
                assertTrue(shapes.containsKey(k), k + " is missing from Sam2Shapes.maskDecoder");
            }
        }
    }

    @Test
    void randomWeightsOfTheWholeModelLoad() {
        StateDict sd = ModelCheckpoints.load(Sam2CudaParityGpuTest.FIXTURES.resolve("sam2/tiny/checkpoint.pt"));
        Sam2Config config = ModelCheckpoints.sam2Config(sd);
        Map<String, int[]> shapes = Sam2Shapes.model(config);
        for (Map.Entry<String, int[]> e : shapes.entrySet()) {
            assertTrue(sd.contains(e.getKey()), e.getKey() + " is not in the checkpoint");
            assertArrayEquals(sd.get(e.getKey()).shape(), e.getValue(), e.getKey());
        }
        try (Sam2Model model = new Sam2Model(Sam2Shapes.random(shapes, 5), config, 1)) {
            assertTrue(model.describe().startsWith("CPU"));
        }
    }
}
