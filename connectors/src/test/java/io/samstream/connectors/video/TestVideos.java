package io.samstream.connectors.video;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import io.samstream.connectors.sink.FfmpegVideoWriter;

/** Small videos written by the real FFmpeg for the tests: solid colours, one per frame, in a cycle. */
final class TestVideos {
    static final int WIDTH = 64;
    static final int HEIGHT = 48;
    static final double FPS = 10;
    /** Mid-saturation colours: survive 4:2:0 and limited range without clipping. */
    static final int[][] COLOURS = {{200, 40, 40}, {40, 180, 60}, {50, 70, 210}, {220, 220, 220}};

    private TestVideos() {
    }

    /** Frame {@code i} is {@code COLOURS[i % 4]}; pts {@code i * 100} ms. */
    static Path write(Path file, int frames, String encoder) throws IOException {
        return write(file, frames, encoder, Map.of());
    }

    /** As {@link #write(Path, int, String)}, with options for the container (e.g. movflags=+faststart). */
    static Path write(Path file, int frames, String encoder, Map<String, String> muxerOptions) throws IOException {
        try (FfmpegVideoWriter writer = FfmpegVideoWriter.open(file, WIDTH, HEIGHT, FPS, encoder, muxerOptions)) {
            for (int i = 0; i < frames; i++) {
                writer.write(solid(COLOURS[i % COLOURS.length]), Math.round(i * 1000 / FPS));
            }
        }
        return file;
    }

    static byte[] solid(int[] rgb) {
        byte[] frame = new byte[3 * WIDTH * HEIGHT];
        for (int p = 0; p < WIDTH * HEIGHT; p++) {
            frame[3 * p] = (byte) rgb[0];
            frame[3 * p + 1] = (byte) rgb[1];
            frame[3 * p + 2] = (byte) rgb[2];
        }
        return frame;
    }

    /** The mean of each channel over the frame. */
    static double[] meanColour(VideoFrame frame) {
        double[] sum = new double[3];
        byte[] rgb = frame.rgb();
        for (int i = 0; i < rgb.length; i++) {
            sum[i % 3] += rgb[i] & 0xFF;
        }
        int pixels = frame.width() * frame.height();
        return new double[] {sum[0] / pixels, sum[1] / pixels, sum[2] / pixels};
    }
}
