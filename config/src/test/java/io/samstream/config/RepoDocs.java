package io.samstream.config;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The repository's documentation as the docs tests read it: the root (found by walking up from the working
 * directory to the parent pom, the one that lists {@code <modules>}), {@code README.md} and {@code docs/*.md}.
 */
final class RepoDocs {
    private RepoDocs() {}

    /** The repository root: the nearest directory at or above the working directory whose pom.xml has modules. */
    static Path root() {
        Path start = Path.of("").toAbsolutePath().normalize();
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            Path pom = dir.resolve("pom.xml");
            if (Files.isRegularFile(pom) && read(pom).contains("<modules>")) {
                return dir;
            }
        }
        throw new IllegalStateException("no parent pom.xml with <modules> at or above " + start);
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
