package io.samstream.gpu.image;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.samstream.testkit.FuzzBounds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Fuzz target of PNG and JPEG reading: an image or a one-line {@link ImageReadException}, in bounds
 * (see CheckpointFuzzTest). The pixel limit is the default's (two 8K frames) scaled down, so a header
 * that claims a huge image is refused before decoding as with the default, within the allocation bound.
 */
class ImageFilesFuzzTest {
    private static final long MAX_PIXELS = 4_000_000;
    private static final Path FILE = file();

    @FuzzTest(maxDuration = "10m")
    void image(byte[] bytes) throws IOException {
        Files.write(FILE, bytes);
        FuzzBounds.check(() -> ImageFiles.read(FILE, MAX_PIXELS), ImageReadException.class);
    }

    private static Path file() {
        try {
            Path dir = Files.createTempDirectory("samstream-fuzz-");
            dir.toFile().deleteOnExit();
            return dir.resolve("fuzz.img");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
