package io.samstream.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the repository's files are, from any test wherever it runs: Maven runs a module's tests in the
 * module's folder, an IDE often in the repository root, the GPU machine in a staged copy. The root is
 * found once, from the working directory up to the folder whose {@code pom.xml} is the samstream parent
 * (the one that lists the modules), so no test needs a path like {@code ../examples/...} that holds in
 * one of those places only.
 */
public final class Fixtures {
    /** Names the repository root outright ({@code -Dsamstream.root=...}), for a test run outside a checkout. */
    public static final String ROOT_PROPERTY = "samstream.root";
    /**
     * Names gpu's reference-fixture folder outright ({@code -Dsamstream.fixtures=...}): the GPU machine gets
     * the fixtures staged beside the test classes, not in a checkout.
     */
    public static final String GPU_FIXTURES_PROPERTY = "samstream.fixtures";
    /** gpu's reference fixtures (made by tools/fixtures), relative to the root. */
    static final String GPU_FIXTURES = "gpu/src/test/resources/fixtures";

    private static volatile Path root;

    private Fixtures() {}

    /** The repository root (absolute, normalized). */
    public static Path root() {
        Path r = root;
        if (r == null) {
            synchronized (Fixtures.class) {
                if (root == null) {
                    root = findRoot();
                }
                r = root;
            }
        }
        return r;
    }

    /** {@code relative} under the repository root (e.g. {@code "docker/app.conf"}); it must exist. */
    public static Path file(String relative) {
        return existing(root().resolve(relative), "repository file " + relative);
    }

    /** gpu's reference-fixture folder ({@value #GPU_FIXTURES}, or {@link #GPU_FIXTURES_PROPERTY}). */
    public static Path gpuFixtures() {
        String named = System.getProperty(GPU_FIXTURES_PROPERTY);
        Path dir = named != null && !named.isBlank() ? Path.of(named).toAbsolutePath().normalize()
                : root().resolve(GPU_FIXTURES);
        return existing(dir, "gpu fixture folder");
    }

    /** {@code relative} under {@link #gpuFixtures()} (e.g. {@code "tiny256/model.pth"}); it must exist. */
    public static Path gpuFixture(String relative) {
        return existing(gpuFixtures().resolve(relative), "gpu fixture " + relative);
    }

    private static Path existing(Path p, String what) {
        if (!Files.exists(p)) {
            throw new IllegalStateException(what + " not found: " + p);
        }
        return p;
    }

    private static Path findRoot() {
        String named = System.getProperty(ROOT_PROPERTY);
        if (named != null && !named.isBlank()) {
            Path p = Path.of(named).toAbsolutePath().normalize();
            if (!isRoot(p)) {
                throw new IllegalStateException("-D" + ROOT_PROPERTY + "=" + named
                        + " is not the samstream repository root (no pom.xml of samstream-parent there)");
            }
            return p;
        }
        Path start = Path.of("").toAbsolutePath().normalize();
        for (Path p = start; p != null; p = p.getParent()) {
            if (isRoot(p)) {
                return p;
            }
        }
        throw new IllegalStateException("the samstream repository root (the folder whose pom.xml is samstream-parent)"
                + " is not " + start + " or above it; run the tests inside a checkout or set -D" + ROOT_PROPERTY);
    }

    /** The parent pom names itself samstream-parent and lists the modules; a module's pom names it as its parent only. */
    private static boolean isRoot(Path dir) {
        Path pom = dir.resolve("pom.xml");
        if (!Files.isRegularFile(pom)) {
            return false;
        }
        try {
            String text = Files.readString(pom, StandardCharsets.UTF_8);
            return text.contains("<artifactId>samstream-parent</artifactId>") && text.contains("<modules>");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + pom, e);
        }
    }
}
