package io.samstream.stream.cli;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.samstream.testkit.FuzzBounds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Fuzz target of {@code segment --prompts PROMPTS.json}: prompt sets or a one-line
 * IllegalArgumentException naming the file (its documented error), within {@link FuzzBounds}.
 */
class PromptSetsJsonFuzzTest {
    private static final Path FILE = file();

    @FuzzTest(maxDuration = "10m")
    void promptsJson(byte[] json) throws IOException {
        Files.write(FILE, json);
        FuzzBounds.check(() -> PromptSetsJson.read(FILE), IllegalArgumentException.class);
    }

    private static Path file() {
        try {
            Path dir = Files.createTempDirectory("samstream-fuzz-");
            dir.toFile().deleteOnExit();
            return dir.resolve("PROMPTS.json");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
