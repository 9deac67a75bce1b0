package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.VideoFrame;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A stream id that ends and runs again: nothing an earlier run wrote is lost. */
class FileSinksTest {
    @TempDir
    Path dir;

    @Test
    void aSecondRunOfAStreamAppendsItsRecordsAndKeepsTheEarlierOverlay() throws Exception {
        FileSinks sinks = FileSinks.underFolders(Optional.of(dir), Optional.of(dir));
        runOnce(sinks, 3);
        Path overlay = dir.resolve("cam").resolve("overlay.mp4");
        long firstSize = Files.size(overlay);
        assertTrue(firstSize > 0);
        runOnce(sinks, 2);
        sinks.close();

        assertEquals(5, Files.readAllLines(dir.resolve("cam").resolve("masks.jsonl")).size(), "3 + 2 records");
        Path kept = dir.resolve("cam").resolve("overlay.1.mp4");
        assertEquals(firstSize, Files.size(kept), "the first run's overlay, kept under a new name");
        assertTrue(Files.size(overlay) > 0, "the second run's overlay");
    }

    private static void runOnce(FileSinks sinks, int frames) throws Exception {
        for (int i = 0; i < frames; i++) {
            VideoFrame f = new VideoFrame("cam", i, i * 40L, Instant.now(), 32, 24, new byte[32 * 24 * 3]);
            MaskRecord r = new MaskRecord("cam", i, i * 40L, f.capturedAt(), 32, 24, "test", List.of(), List.of());
            sinks.accept(r, f).toCompletableFuture().join();
        }
        sinks.streamEnded("cam");
    }
}
