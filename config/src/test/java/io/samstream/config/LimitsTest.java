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

    /** prompts.concepts-every-frames: a stream's own cadence, 1 to the global key's bound, in the file and the topic. */
    @Test
    void aStreamsConceptCadenceIsReadAndBounded() throws IOException {
        SamstreamConfig c = ConfigLoader.load(write("samstream.streams = [{id = dock, location = \"a.mp4\", prompts {"
                + " concepts = [person], concepts-every-frames = 7 }}, {id = yard, location = \"b.mp4\", prompts {"
                + " concepts = [person] }}]"));
        assertEquals(7, c.streams().get(0).prompts().conceptsEveryFrames());
        assertEquals(0, c.streams().get(1).prompts().conceptsEveryFrames(), "left out: the engine's cadence");
        for (String bad : new String[] {"0", "10001", "-1", "often"}) {
            Path p = write("samstream.streams = [{id = dock, location = \"a.mp4\", prompts { concepts = [person],"
                    + " concepts-every-frames = " + bad + " }}]");
            ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(p), bad);
            assertTrue(e.getMessage().contains("(dock).prompts.concepts-every-frames"), e.getMessage());
            if (!bad.equals("often")) {
                assertTrue(e.getMessage().contains("must be 1 to " + EngineSettings.Tracking.MAX_CONCEPTS_EVERY_FRAMES
                        + " (the detector runs on every n-th frame), got " + bad), e.getMessage());
            }
        }
        StreamSpec topic = StreamSpecs.fromJson("dock", "{\"location\": \"a.mp4\", \"prompts\": {\"concepts\":"
                + " [\"pallet\"], \"concepts-every-frames\": 4}}", c.streamDefaults());
        assertEquals(4, topic.prompts().conceptsEveryFrames());
        ConfigException e = assertThrows(ConfigException.class, () -> StreamSpecs.fromJson("dock", "{\"location\":"
                + " \"a.mp4\", \"prompts\": {\"concepts-every-frames\": 20000}}", c.streamDefaults()));
        assertTrue(e.getMessage().contains("stream definition 'dock'.prompts.concepts-every-frames: must be 1 to"),
                e.getMessage());
    }

    @Test
    void conceptsAreReadFromAStreamAndHeldToTheConceptLimits() throws IOException {
        SamstreamConfig c = ConfigLoader.load(write("samstream.streams = [{id = dock, location = \"a.mp4\", prompts {"
                + " concepts = [\" person \", forklift] }}]"));
        assertEquals(java.util.List.of("person", "forklift"), c.streams().get(0).prompts().concepts());
        assertEquals(8, c.limits().maxConceptsPerStream());
        assertEquals(200, c.limits().maxConceptChars());
        assertEquals(1, c.tracking().conceptsEveryFrames());
        assertEquals(3, ConfigLoader.load(write("samstream.tracking.concepts.every-frames = 3")).tracking()
                .conceptsEveryFrames());
        Path zero = write("samstream.tracking.concepts.every-frames = 0");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(zero));
        assertTrue(e.getMessage().contains("samstream.tracking.concepts.every-frames"), e.getMessage());

        Path many = write("samstream.limits.max-concepts-per-stream = 2\nsamstream.streams = [{id = dock, location ="
                + " \"a.mp4\", prompts { concepts = [a, b, c] }}]");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(many));
        assertTrue(e.getMessage().contains("stream dock: prompts.concepts has 3 concepts, more than"
                + " samstream.limits.max-concepts-per-stream = 2"), e.getMessage());
        Path longOne = write("samstream.limits.max-concept-chars = 5\nsamstream.streams = [{id = dock, location ="
                + " \"a.mp4\", prompts { concepts = [forklift] }}]");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(longOne));
        assertTrue(e.getMessage().contains("stream dock: prompts.concepts: concept \"forklift...\" has 8 characters,"
                + " more than samstream.limits.max-concept-chars = 5"), e.getMessage());
        Path twice = write("samstream.streams = [{id = dock, location = \"a.mp4\", prompts { concepts = [a, \"a \"]"
                + " }}]");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(twice));
        assertTrue(e.getMessage().contains("dock") && e.getMessage().contains("concept \"a\" is given twice"),
                e.getMessage());
        Path notText = write("samstream.streams = [{id = dock, location = \"a.mp4\", prompts { concepts = [[1]] }}]");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(notText));
        assertTrue(e.getMessage().contains("prompts.concepts[0]: expected a noun phrase"), e.getMessage());
        Path over = write("samstream.limits.max-concepts-per-stream = 17");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(over));
        assertTrue(e.getMessage().contains("samstream.limits.max-concepts-per-stream must be 1 to 16"), e.getMessage());
        // The streams topic's JSON takes the same key.
        StreamSpec topic = StreamSpecs.fromJson("dock", "{\"location\": \"a.mp4\", \"prompts\": {\"concepts\":"
                + " [\"pallet\"]}}", c.streamDefaults());
        assertEquals(java.util.List.of("pallet"), topic.prompts().concepts());
        e = assertThrows(ConfigException.class, () -> StreamSpecs.fromJson("dock", "{\"location\": \"a.mp4\","
                + " \"prompts\": {\"concepts\": [\"  \"]}}", c.streamDefaults()));
        assertTrue(e.getMessage().contains("stream definition 'dock'") && e.getMessage().contains("a blank one"),
                e.getMessage());
    }

    private Path write(String text) throws IOException {
        return Files.writeString(Files.createTempFile(dir, "app", ".conf"), text);
    }
}
