package io.samstream.testkit.connectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.video.DecoderPreference;
import io.samstream.connectors.video.FrameSource;
import io.samstream.connectors.video.FrameSources;
import io.samstream.connectors.video.SourceSpec;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.connectors.video.VideoFrame;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TestClipsTest {
    @TempDir
    Path dir;

    @Test
    void aClipPlaysItsFramesOfThePatternBack() throws Exception {
        Path clip = TestClips.testPattern(dir.resolve("clip.mp4"), 96, 64, 10, 6, 3);
        List<VideoFrame> frames = new ArrayList<>();
        try (FrameSource source = FrameSources.open(SourceSpec.of("check", clip.toString())
                .withDecoder(DecoderPreference.CPU))) {
            VideoFrame f;
            while ((f = source.next()) != null) {
                frames.add(f);
            }
        }
        assertEquals(6, frames.size());
        byte[] first = new TestPatternSource("x", 96, 64, 10, 6, 3, false).render(0);
        VideoFrame decoded = frames.get(0);
        assertArrayEquals(new int[] {96, 64}, new int[] {decoded.width(), decoded.height()});
        // Lossy H.264 of the pattern: close to what was drawn, not equal.
        double diff = 0;
        for (int i = 0; i < first.length; i++) {
            diff += Math.abs((first[i] & 0xff) - (decoded.rgb()[i] & 0xff));
        }
        assertTrue(diff / first.length < 16, "mean |difference| to the drawn frame: " + diff / first.length);
        assertEquals(100, frames.get(1).ptsMillis() - frames.get(0).ptsMillis(), "10 frames/s");
    }
}
