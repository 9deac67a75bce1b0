package io.samstream.stream.app;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The example model shipped in {@code examples/}: the default when no checkpoint is configured. */
final class BundledModel {
    static final String FILE = "examples/sam-demo-synthetic.pth";

    private BundledModel() {}

    /**
     * Looks in {@code $SAMSTREAM_HOME} (the launcher sets it), next to the jar's checkout
     * ({@code stream/target/samstream.jar} -> the root) and in the working directory.
     */
    static Path locate() {
        List<Path> candidates = new ArrayList<>();
        String home = System.getenv("SAMSTREAM_HOME");
        if (home != null && !home.isBlank()) {
            candidates.add(Path.of(home).resolve(FILE));
        }
        try {
            Path jar = Path.of(BundledModel.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path p = jar.getParent(); p != null; p = p.getParent()) {
                candidates.add(p.resolve(FILE));
            }
        } catch (URISyntaxException | RuntimeException e) {
            // Not from a file: only the other places.
        }
        candidates.add(Path.of(FILE).toAbsolutePath());
        for (Path c : candidates) {
            if (Files.isRegularFile(c)) {
                return c.normalize();
            }
        }
        throw new IllegalStateException("no checkpoint: set samstream.model.checkpoint (the bundled " + FILE
                + " was not found; run from the samstream checkout or set SAMSTREAM_HOME)");
    }

    /** The model's name in mask records: the checkpoint's file name without its extension. */
    static String modelName(Path checkpoint) {
        String n = checkpoint.getFileName().toString();
        int dot = n.lastIndexOf('.');
        return dot > 0 ? n.substring(0, dot) : n;
    }
}
