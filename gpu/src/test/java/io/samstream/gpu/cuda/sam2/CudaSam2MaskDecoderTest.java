package io.samstream.gpu.cuda.sam2;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2ConfigInference;
import io.samstream.gpu.sam2.Sam2Shapes;
import org.junit.jupiter.api.Test;

/** What the CUDA SAM 2 mask decoder can run and the memory it asks for, told before any GPU work (no GPU needed). */
class CudaSam2MaskDecoderTest {
    @Test
    void everyReleaseRuns() {
        for (Sam2ConfigInference.Released r : Sam2ConfigInference.RELEASES) {
            assertNull(CudaSam2MaskDecoder.unsupported(Sam2Shapes.release(r.layout().name())), r.layout().name());
        }
    }

    @Test
    void anUnsupportedWidthIsNamed() {
        Sam2Config tiny = Sam2Shapes.release("hiera_tiny");
        Sam2Config wide = new Sam2Config(1000, 96, tiny.stages(), 1024, 64, 7, 4, 2048, 2048, 256, 4, 3, 2, 7,
                tiny.layout());
        String why = CudaSam2MaskDecoder.unsupported(wide);
        assertTrue(why != null && why.contains("hidden width 1024") && why.contains("input size 1000"), why);
    }

    /** hiera_tiny at 64 sets: the keys, image projections and masks dominate (about 0.6 GB), the weights are ~20 MB. */
    @Test
    void poolBytesGrowWithTheSets() {
        Sam2Config tiny = Sam2Shapes.release("hiera_tiny");
        long one = CudaSam2MaskDecoder.poolBytes(tiny, 1), many = CudaSam2MaskDecoder.poolBytes(tiny, 64);
        assertTrue(one > 16L << 20 && one < 64L << 20, "1 set: " + one);
        assertTrue(many > 512L << 20 && many < 1L << 30, "64 sets: " + many);
    }
}
