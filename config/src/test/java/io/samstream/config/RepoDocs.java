package io.samstream.config;

import io.samstream.testkit.Fixtures;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The repository's documentation as the docs tests read it: {@code README.md} and {@code docs/*.md} under the
 * repository root that {@link Fixtures#root()} finds.
 */
final class RepoDocs {
    private RepoDocs() {}

    /** The repository root, as the testkit finds it. */
    static Path root() {
        return Fixtures.root();
    }

    static Path readme() {
        return root().resolve("README.md");
    }

    /** {@code docs/*.md}, sorted by name. */
    static List<Path> docPages() {
        try (Stream<Path> files = Files.list(root().resolve("docs"))) {
            return files.filter(p -> p.getFileName().toString().endsWith(".md") && Files.isRegularFile(p))
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** README.md then docs/*.md. */
    static List<Path> allPages() {
        return Stream.concat(Stream.of(readme()), docPages().stream()).toList();
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
