package io.samstream.connectors.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.samstream.connectors.video.DecoderPreference;
import io.samstream.connectors.video.FrameSource;
import io.samstream.connectors.video.FrameSources;
import io.samstream.connectors.video.SourceSpec;
import io.samstream.connectors.video.VideoFrame;

/** Writes an overlay with the real FFmpeg and decodes it back with the real FFmpeg. */
class OverlayVideoWriterTest {
    private static final int W = 64;
    private static final int H = 48;
    private static final int FRAMES = 6;
    private static final int GREY = 128;
    /** The object's mask: a 20x16 box at (20, 12). */
    private static final int X0 = 20;
    private static final int Y0 = 12;
    private static final int X1 = 40;
    private static final int Y1 = 28;

    @TempDir
    static Path dir;
    private static Path file;
    private static String codec;
    private static List<VideoFrame> decoded;

    @BeforeAll
    static void writeAndDecode() throws IOException {
        file = dir.resolve("out").resolve(OverlayVideoWriter.FILE_NAME);
        boolean[] mask = new boolean[W * H];
        for (int y = Y0; y < Y1; y++) {
            Arrays.fill(mask, y * W + X0, y * W + X1, true);
        }
        try (OverlayVideoWriter writer = new OverlayVideoWriter(file, "cam-1", 10)) {
            assertNull(writer.codecName());
            for (int i = 0; i < FRAMES; i++) {
                writer.write(greyFrame("cam-1", i, 5_000 + i * 100L, W, H), List.of(new ObjectMask("7", mask)));
            }
            codec = writer.codecName();
            assertEquals(FRAMES, writer.framesWritten());
        }
        decoded = new ArrayList<>();
        try (FrameSource source = FrameSources.open(SourceSpec.of("check", file.toString())
                .withDecoder(DecoderPreference.CPU))) {
            for (VideoFrame frame; (frame = source.next()) != null; ) {
                decoded.add(frame);
            }
        }
    }

    @Test
    void usesH264WhenThisFfmpegHasAnEncoderForIt() throws IOException {
        assertEquals(FfmpegVideoWriter.defaultEncoder(), codec);
        assertTrue(FfmpegVideoWriter.H264_ENCODERS.contains(codec), "bundled FFmpeg lost its H.264 encoder: " + codec);
    }

    @Test
    void everyFrameComesBackAtItsSizeWithTimesFromZero() {
        assertEquals(FRAMES, decoded.size());
        for (int i = 0; i < FRAMES; i++) {
            assertEquals(W, decoded.get(i).width());
            assertEquals(H, decoded.get(i).height());
            assertEquals(i * 100, decoded.get(i).ptsMillis(), 1);
        }
    }

    @Test
    void pixelsInsideTheMaskCarryTheObjectsTintAndOutsideStayGrey() {
        int colour = ObjectPalette.rgbOf("7");
        int[] tint = {colour >>> 16 & 0xFF, colour >>> 8 & 0xFF, colour & 0xFF};
        for (VideoFrame frame : decoded) {
            double[] inside = mean(frame, X0 + 3, Y0 + 3, X1 - 3, Y1 - 3);
            double[] outside = mean(frame, 0, 0, W, 8);
            for (int c = 0; c < 3; c++) {
                double expected = GREY + (tint[c] - GREY) * MaskOverlay.FILL_OPACITY;
                assertEquals(expected, inside[c], 8, "inside, channel " + c + " of frame " + frame.index());
                assertEquals(GREY, outside[c], 6, "outside, channel " + c + " of frame " + frame.index());
            }
        }
    }

    /**
     * Finding 6 of issue #31: a frame of another size ended the stream ("overlay ... is 320x240, frame 30 is
     * 640x480"). Each size change starts a new segment: overlay.mp4, overlay-0001.mp4, overlay-0002.mp4.
     */
    @Test
    void aNewFrameSizeStartsANewSegmentFile() throws IOException {
        Path first = dir.resolve("segments").resolve(OverlayVideoWriter.FILE_NAME);
        try (OverlayVideoWriter writer = new OverlayVideoWriter(first, "cam-4", 10)) {
            for (int i = 0; i < 3; i++) {
                writer.write(greyFrame("cam-4", i, i * 100L, W, H), List.of());
            }
            for (int i = 3; i < 7; i++) {
                writer.write(greyFrame("cam-4", i, i * 100L, 96, 64), List.of());
            }
            writer.write(greyFrame("cam-4", 7, 700, W, H), List.of());
            assertEquals(8, writer.framesWritten());
            assertEquals(3, writer.segments());
        }
        assertEquals(dir.resolve("segments").resolve("overlay-0001.mp4"), OverlayVideoWriter.segmentFile(first, 1));
        int[][] expected = {{3, W, H}, {4, 96, 64}, {1, W, H}};
        for (int n = 0; n < 3; n++) {
            List<VideoFrame> frames = new ArrayList<>();
            try (FrameSource source = FrameSources.open(SourceSpec.of("check", OverlayVideoWriter.segmentFile(first, n)
                    .toString()).withDecoder(DecoderPreference.CPU))) {
                for (VideoFrame frame; (frame = source.next()) != null; ) {
                    frames.add(frame);
                }
            }
            assertEquals(expected[n][0], frames.size(), "frames of segment " + n);
            assertEquals(expected[n][1], frames.get(0).width());
            assertEquals(expected[n][2], frames.get(0).height());
            assertEquals(0, frames.get(0).ptsMillis(), 1, "each segment's time starts at 0");
        }
    }

    @Test
    void aFrameOfAnotherStreamIsRefusedNamingTheStream() throws IOException {
        Path other = dir.resolve("other.mp4");
        try (OverlayVideoWriter writer = new OverlayVideoWriter(other, "cam-2", 25)) {
            writer.write(greyFrame("cam-2", 0, 0, W, H), List.of());
            IllegalArgumentException stream = assertThrows(IllegalArgumentException.class,
                    () -> writer.write(greyFrame("cam-3", 1, 40, W, H), List.of()));
            assertTrue(stream.getMessage().startsWith("cam-2: "), stream.getMessage());
            IllegalArgumentException mask = assertThrows(IllegalArgumentException.class,
                    () -> writer.write(greyFrame("cam-2", 1, 40, W, H), List.of(new ObjectMask("a", new boolean[10]))));
            assertTrue(mask.getMessage().startsWith("cam-2: mask of object a has 10 pixels"), mask.getMessage());
        }
        assertTrue(Files.size(other) > 0);
    }

    @Test
    void framesPlayFromTheFileASecondAfterTheyWereWrittenWithoutClose() throws Exception {
        Path live = dir.resolve("live").resolve(OverlayVideoWriter.FILE_NAME);
        OverlayVideoWriter writer = new OverlayVideoWriter(live, "k", 10);
        try {
            for (int i = 0; i < 5; i++) { // half a second of video: no keyframe cuts a fragment
                writer.write(greyFrame("k", i, i * 100L, W, H), List.of());
            }
            Thread.sleep(OverlayVideoWriter.FLUSH_INTERVAL.toMillis() + 700); // no later frame: the timer flushes
            Path copy = Files.copy(live, dir.resolve("as-a-kill-leaves-it.mp4")); // what a kill -9 now leaves
            assertEquals(5, framesIn(copy));
            for (int i = 5; i < 8; i++) {
                writer.write(greyFrame("k", i, i * 100L, W, H), List.of());
            }
            Thread.sleep(OverlayVideoWriter.FLUSH_INTERVAL.toMillis() + 700);
            assertEquals(8, framesIn(Files.copy(live, dir.resolve("later.mp4"))));
        } finally {
            writer.close();
        }
        assertEquals(8, framesIn(live));
    }

    private static int framesIn(Path file) throws IOException {
        int count = 0;
        try (FrameSource source = FrameSources.open(SourceSpec.of("check", file.toString())
                .withDecoder(DecoderPreference.CPU))) {
            while (source.next() != null) {
                count++;
            }
        }
        return count;
    }

    @Test
    void noFrameNoFile() throws IOException {
        Path none = dir.resolve("none.mp4");
        new OverlayVideoWriter(none, "idle", 10).close();
        assertFalse(Files.exists(none));
    }

    @Test
    void oddSizesArePaddedToEven() throws IOException {
        Path odd = dir.resolve("odd.mp4");
        try (OverlayVideoWriter writer = new OverlayVideoWriter(odd, "o", 10)) {
            writer.write(greyFrame("o", 0, 0, 33, 21), List.of());
            writer.write(greyFrame("o", 1, 100, 33, 21), List.of());
        }
        try (FrameSource source = FrameSources.open(SourceSpec.of("o", odd.toString()))) {
            VideoFrame frame = source.next();
            assertEquals(34, frame.width());
            assertEquals(22, frame.height());
            assertEquals(GREY, mean(frame, 0, 0, 34, 22)[1], 6);
        }
    }

    @Test
    void mpeg4FallbackWorksToo() throws IOException {
        Path mpeg4 = dir.resolve("fallback.mp4");
        try (OverlayVideoWriter writer = new OverlayVideoWriter(mpeg4, "m", 10, FfmpegVideoWriter.FALLBACK_ENCODER)) {
            for (int i = 0; i < 3; i++) {
                writer.write(greyFrame("m", i, i * 100L, W, H), List.of());
            }
            assertEquals("mpeg4", writer.codecName());
        }
        int count = 0;
        try (FrameSource source = FrameSources.open(SourceSpec.of("m", mpeg4.toString()))) {
            while (source.next() != null) {
                count++;
            }
        }
        assertEquals(3, count);
    }

    private static VideoFrame greyFrame(String stream, long index, long pts, int width, int height) {
        byte[] rgb = new byte[3 * width * height];
        Arrays.fill(rgb, (byte) GREY);
        return new VideoFrame(stream, index, pts, Instant.now(), width, height, rgb);
    }

    private static double[] mean(VideoFrame frame, int x0, int y0, int x1, int y1) {
        double[] sum = new double[3];
        for (int y = y0; y < y1; y++) {
            for (int x = x0; x < x1; x++) {
                for (int c = 0; c < 3; c++) {
                    sum[c] += frame.rgb()[3 * (y * frame.width() + x) + c] & 0xFF;
                }
            }
        }
        int n = (x1 - x0) * (y1 - y0);
        return new double[] {sum[0] / n, sum[1] / n, sum[2] / n};
    }
}
