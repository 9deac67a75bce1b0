package io.samstream.testkit.connectors;

import io.samstream.connectors.sink.FfmpegVideoWriter;
import io.samstream.connectors.video.FrameSource;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.connectors.video.VideoFrame;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/** Video files made in the test: the test pattern (moving shapes on a texture) encoded by the real FFmpeg. */
public final class TestClips {
    private TestClips() {}

    /**
     * Writes {@code frames} frames of {@link TestPatternSource}({@code seed}) at {@code fps} to {@code file},
     * in the container its name says ({@code .mp4}, {@code .ts}, ...), with the writer's default encoder
     * ({@link FfmpegVideoWriter#defaultEncoder()}: H.264 where this FFmpeg has one).
     *
     * @return {@code file}
     */
    public static Path testPattern(Path file, int width, int height, double fps, int frames, long seed)
            throws IOException {
        try (FrameSource pattern = new TestPatternSource("clip", width, height, fps, frames, seed, false);
             FfmpegVideoWriter writer = FfmpegVideoWriter.open(file, width, height, fps, null, Map.of())) {
            VideoFrame f;
            while ((f = pattern.next()) != null) {
                writer.write(f.rgb(), f.ptsMillis());
            }
        }
        return file;
    }
}
