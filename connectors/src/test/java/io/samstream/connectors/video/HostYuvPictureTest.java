package io.samstream.connectors.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.sink.FfmpegVideoWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A CPU decoder's frames for a GPU backend come as their YUV planes: the planes copied without the decoder's row
 * padding, in I420 order, give the frame's colours when converted the way the GPU kernel does (image_ops.cuh);
 * their RGB, when a sink asks, is the RGB the same file gives to a CPU backend.
 */
class HostYuvPictureTest {
    // Not multiples of the decoder's row alignment, so the planes have padding to leave out; 4:2:0 needs even sizes.
    private static final int WIDTH = 150;
    private static final int HEIGHT = 86;

    @TempDir
    static Path dir;
    private static Path clip;

    @BeforeAll
    static void writeClip() throws IOException {
        clip = dir.resolve("pattern.mp4");
        try (TestPatternSource pattern = new TestPatternSource("p", WIDTH, HEIGHT, 10, 4, 7, false);
             FfmpegVideoWriter writer = FfmpegVideoWriter.open(clip, WIDTH, HEIGHT, 10, null, Map.of())) {
            for (VideoFrame f = pattern.next(); f != null; f = pattern.next()) {
                writer.write(f.rgb(), f.ptsMillis());
            }
        }
    }

    @Test
    void planesForAGpuBackendConvertToTheFramesColoursAndItsRgbIsTheCpuPaths() throws IOException {
        List<VideoFrame> yuv;
        List<VideoFrame> rgb;
        try (FrameSource a = FrameSources.open(SourceSpec.of("cam", clip.toString()).withDecoder(DecoderPreference.CPU)
                .withGpuFrames(true));
             FrameSource b = FrameSources.open(SourceSpec.of("cam", clip.toString()).withDecoder(DecoderPreference.CPU))) {
            yuv = FfmpegFrameSourceTest.readAll(a);
            rgb = FfmpegFrameSourceTest.readAll(b);
        }
        assertEquals(4, yuv.size());
        for (int i = 0; i < yuv.size(); i++) {
            VideoFrame f = yuv.get(i);
            HostYuvPicture p = f.hostYuv();
            assertNotNull(p, "frame " + i + " comes as its planes");
            assertNull(f.device());
            long bytes = (long) WIDTH * HEIGHT + 2L * (WIDTH / 2) * (HEIGHT / 2);
            assertEquals(bytes, p.planeBytes());
            ByteBuffer planes = ByteBuffer.allocate((int) bytes + 16);
            planes.position(3); // written at the buffer's position
            p.copyPlanes(planes);
            assertEquals(3 + bytes, planes.position());
            byte[] expected = rgb.get(i).rgb();
            byte[] converted = toRgb(planes, 3, p);
            double sum = 0;
            for (int k = 0; k < expected.length; k++) {
                sum += Math.abs((expected[k] & 0xff) - (converted[k] & 0xff));
            }
            double mean = sum / expected.length;
            // swscale and the kernel upsample chroma a little differently; a plane out of place or a row
            // misaligned costs tens of levels on this pattern.
            assertTrue(mean < 2.5, "frame " + i + ": planes converted differ from swscale's RGB by " + mean + " on average");
            assertArrayEquals(expected, f.rgb(), "frame " + i + ": a sink gets the RGB of the CPU path");
        }
        VideoFrame last = yuv.get(yuv.size() - 1);
        last.release();
        assertTrue(last.hostYuv().released());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> last.hostYuv().copyPlanes(ByteBuffer.allocate(1 << 16)));
        assertTrue(e.getMessage().startsWith("cam: "), e.getMessage());
        yuv.forEach(VideoFrame::release);
    }

    /** I420 to RGB as image_ops.cuh's yuv_to_rgb8 does (bilinear chroma at H.264 siting, the picture's matrix). */
    private static byte[] toRgb(ByteBuffer planes, int at, HostYuvPicture p) {
        int cw = (WIDTH + 1) / 2;
        int ch = (HEIGHT + 1) / 2;
        int cb = at + WIDTH * HEIGHT;
        int cr = cb + cw * ch;
        float kr = p.matrix().kr;
        float kb = p.matrix().kb;
        float kg = 1 - kr - kb;
        boolean full = p.fullRange();
        float yScale = full ? 1 : 255f / 219;
        float cScale = full ? 1 : 255f / 224;
        float yOff = full ? 0 : 16;
        byte[] out = new byte[3 * WIDTH * HEIGHT];
        for (int y = 0; y < HEIGHT; y++) {
            for (int x = 0; x < WIDTH; x++) {
                float luma = ((planes.get(at + y * WIDTH + x) & 0xff) - yOff) * yScale;
                float cx = 0.5f * x;
                float cy = Math.max(0, 0.5f * y - 0.25f);
                int x0 = Math.min((int) cx, cw - 1);
                int y0 = Math.min((int) cy, ch - 1);
                int x1 = Math.min(x0 + 1, cw - 1);
                int y1 = Math.min(y0 + 1, ch - 1);
                float fx = cx - x0;
                float fy = cy - y0;
                float[] uv = new float[2];
                for (int c = 0; c < 2; c++) {
                    int base = c == 0 ? cb : cr;
                    float a = planes.get(base + y0 * cw + x0) & 0xff;
                    float b = planes.get(base + y0 * cw + x1) & 0xff;
                    float d = planes.get(base + y1 * cw + x0) & 0xff;
                    float e = planes.get(base + y1 * cw + x1) & 0xff;
                    float top = a + (b - a) * fx;
                    float bottom = d + (e - d) * fx;
                    uv[c] = (top + (bottom - top) * fy - 128) * cScale;
                }
                int o = 3 * (y * WIDTH + x);
                out[o] = clamp(luma + 2 * (1 - kr) * uv[1]);
                out[o + 1] = clamp(luma - (2 * kb * (1 - kb) * uv[0] + 2 * kr * (1 - kr) * uv[1]) / kg);
                out[o + 2] = clamp(luma + 2 * (1 - kb) * uv[0]);
            }
        }
        return out;
    }

    private static byte clamp(float v) {
        return (byte) Math.max(0, Math.min(255, Math.round(v)));
    }
}
