package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.Device;
import io.samstream.connectors.video.DecoderPreference;
import io.samstream.connectors.video.FrameSource;
import io.samstream.connectors.video.FrameSources;
import io.samstream.connectors.video.SourceSpec;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.SamModels;
import io.samstream.gpu.cuda.CudaAvailability;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.testkit.TestModels;
import io.samstream.testkit.connectors.TestClips;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * NVDEC's frames kept in GPU memory (FFmpeg's CUDA frames on the primary context) read in place by the
 * CUDA backend: the encoder's output from the NV12 planes (converted, resized, normalized on the GPU) matches
 * its output from the CPU decoder's RGB of the same file, and a GPU frame's RGB downloaded for a sink matches
 * the CPU decoder's; a CPU decoder's YUV planes, uploaded as they came and converted on the GPU, encode as its
 * RGB does. Skips where no GPU is usable (CI), saying why.
 */
@Tag("gpu")
@Timeout(300)
class GpuFramesGpuTest {
    static final int FRAMES = 6;

    @Test
    void nvdecFramesOnTheGpuEncodeAsTheCpuDecodersRgb(@TempDir Path dir) throws Exception {
        CudaAvailability a = CudaAvailability.probe();
        Assumptions.assumeTrue(a.available(), () -> "GPU tests skipped: " + a.reason());
        Path clip = TestClips.testPattern(dir.resolve("clip.mp4"), 1280, 720, 30, FRAMES, 3);
        try (SamBackend cuda = SamModels.open(TestModels.demoSam(), Device.CUDA, 2, 2);
             FrameSource gpu = FrameSources.open(new SourceSpec("g", clip.toString(), DecoderPreference.NVDEC, Map.of())
                     .withGpuFrames(true));
             FrameSource cpu = FrameSources.open(new SourceSpec("c", clip.toString(), DecoderPreference.CPU, Map.of()))) {
            Segmenter segmenter = new Segmenter(cuda, "test");
            for (int i = 0; i < FRAMES; i++) {
                VideoFrame g = gpu.next();
                VideoFrame c = cpu.next();
                assertNotNull(g.device(), "frame " + i + ": NVDEC's frame stays on the GPU");

                assertEncodesAsRgb(cuda, segmenter.image(g), c, "frame " + i + ": NV12 on the GPU");

                if (i == FRAMES - 1) {
                    // Released before a sink asked: a clear error, never a read of freed memory.
                    g.release();
                    assertThrows(IllegalStateException.class, g::rgb);
                    continue;
                }
                byte[] downloaded = g.rgb();
                double rgbDiff = meanAbsDiff(toInts(downloaded), toInts(c.rgb()));
                System.out.printf(Locale.ROOT, "frame %d: RGB downloaded from the GPU frame vs CPU decoder: mean |diff| "
                        + "%.3f levels%n", i, rgbDiff);
                // Not bit for bit: NVDEC's NV12 and the CPU decoder's yuv420p take different swscale paths to RGB
                // (about one level on average: bench/results/2026-12-02-h200-stream-pipeline.md).
                assertTrue(rgbDiff < 2.0, "frame " + i + ": downloaded RGB differs by " + rgbDiff + " levels on average");
                g.release();
                assertTrue(g.device().released());
            }
        }
    }

    @Test
    void aCpuDecodersPlanesUploadedAsTheyCameEncodeAsItsRgb(@TempDir Path dir) throws Exception {
        CudaAvailability a = CudaAvailability.probe();
        Assumptions.assumeTrue(a.available(), () -> "GPU tests skipped: " + a.reason());
        // Chroma planes of odd size (321 x 181), and decoder rows with padding.
        Path clip = TestClips.testPattern(dir.resolve("clip.mp4"), 642, 362, 30, FRAMES, 5);
        try (SamBackend cuda = SamModels.open(TestModels.demoSam(), Device.CUDA, 2, 2);
             FrameSource planes = FrameSources.open(new SourceSpec("y", clip.toString(), DecoderPreference.CPU,
                     Map.of()).withGpuFrames(true));
             FrameSource cpu = FrameSources.open(new SourceSpec("c", clip.toString(), DecoderPreference.CPU, Map.of()))) {
            Segmenter segmenter = new Segmenter(cuda, "test");
            for (int i = 0; i < FRAMES; i++) {
                VideoFrame y = planes.next();
                VideoFrame c = cpu.next();
                assertNotNull(y.hostYuv(), "frame " + i + ": the CPU decoder's frame comes as its planes");
                assertTrue(segmenter.image(y) instanceof io.samstream.gpu.image.HostYuvImage, "frame " + i);
                assertEncodesAsRgb(cuda, segmenter.image(y), c, "frame " + i + ": I420 planes converted on the GPU");
                y.release();
            }
        }
    }

    /** The encoder's output from {@code image} is within 3 % of its output from the CPU decoder's RGB of the frame. */
    private static void assertEncodesAsRgb(SamBackend cuda, io.samstream.gpu.image.FrameImage image, VideoFrame cpu,
            String what) {
        Tensor fromImage = cuda.encodeFrames(List.of(image));
        Tensor fromRgb = cuda.encodeFrames(List.of(new RgbImage(cpu.width(), cpu.height(), cpu.rgb())));
        double diff = meanAbsDiff(fromImage.data(), fromRgb.data()) / meanAbs(fromRgb.data());
        System.out.printf(Locale.ROOT, "%s vs the CPU decoder's RGB: embeddings' mean |diff| %.4f of the mean |value|%n",
                what, diff);
        assertTrue(diff < 0.03, what + ": embeddings differ by " + diff + " of their mean magnitude");
    }

    private static float[] toInts(byte[] b) {
        float[] f = new float[b.length];
        for (int i = 0; i < b.length; i++) {
            f[i] = b[i] & 0xFF;
        }
        return f;
    }

    private static double meanAbsDiff(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += Math.abs(a[i] - b[i]);
        }
        return s / a.length;
    }

    private static double meanAbs(float[] a) {
        return Arrays.stream(toDoubles(a)).map(Math::abs).average().orElse(0);
    }

    private static double[] toDoubles(float[] a) {
        double[] d = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            d[i] = a[i];
        }
        return d;
    }
}
