package io.samstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code samstream.limits}: read, validated, and the configuration file's own streams held to it. */
class LimitsTest {
    @TempDir
    Path dir;

    @Test
    void defaultsAreReferenceConfs() {
        Limits l = ConfigLoader.load().limits();
        assertEquals(Limits.DEFAULTS, l);
        assertEquals(256, l.maxObjectsPerStream());
        assertEquals(1000, l.maxPendingChanges());
        assertEquals(100_000, l.maxPromptFrameAhead());
        assertEquals(900 * 1024, l.maxStateBytes());
    }

    @Test
    void sizesTakeUnitsAndBoundsAreNamed() throws IOException {
        Limits l = ConfigLoader.load(write("samstream.limits { max-state-bytes = 512 KiB, max-objects-per-stream = 8 }"))
                .limits();
        assertEquals(512 * 1024, l.maxStateBytes());
        assertEquals(8, l.maxObjectsPerStream());
        Path f = write("samstream.limits.max-state-bytes = 2 MiB");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().startsWith(f + ": samstream.limits.max-state-bytes must be 1024 to 1032192, got 2097152"),
                e.getMessage());
        Path g = write("samstream.limits.max-pending-changes = 0");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(g));
        assertTrue(e.getMessage().contains("samstream.limits.max-pending-changes must be 1 to"), e.getMessage());
        Path h = write("samstream.limits.max-state-bytes = lots");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(h));
        assertTrue(e.getMessage().contains("samstream.limits.max-state-bytes: expected a size"), e.getMessage());
    }

    /** Finding 5 of issue #31: a definition of 3000 objects; the configuration file's streams are held to the limit. */
    @Test
    void aStreamOfTheFileWithMoreObjectsThanTheLimitIsAnError() throws IOException {
        StringBuilder objects = new StringBuilder();
        for (int i = 0; i < 3000; i++) {
            objects.append(i == 0 ? "" : ", ").append("{id = ").append(i).append(", box = [1, 1, 9, 9]}");
        }
        Path f = write("samstream.streams = [{id = crowd, location = \"a.mp4\", prompts { objects = [" + objects
                + "] }}]");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("stream crowd has 3000 objects (3000 given, 0 of the grid), more than"
                + " samstream.limits.max-objects-per-stream = 256"), e.getMessage());
        // a grid counts its cells: 17 x 17 = 289
        Path g = write("samstream.streams = [{id = grid, location = \"a.mp4\", prompts { grid = 17 }}]");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(g));
        assertTrue(e.getMessage().contains("stream grid has 289 objects (0 given, 289 of the grid)"), e.getMessage());
        // within a raised limit it loads
        Path h = write("samstream.limits.max-objects-per-stream = 300\n"
                + "samstream.streams = [{id = grid, location = \"a.mp4\", prompts { grid = 17 }}]");
        assertEquals(1, ConfigLoader.load(h).streams().size());
    }

    private Path write(String text) throws IOException {
        return Files.writeString(Files.createTempFile(dir, "app", ".conf"), text);
    }
}
