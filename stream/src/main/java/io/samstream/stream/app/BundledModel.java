package io.samstream.stream.app;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The example models shipped in {@code examples/}: the SAM one is the default when no checkpoint is configured;
 * the SAM 2.1 one is what {@code samstream demo --model sam2} runs (memory mode), the SAM 3 one {@code --model
 * sam3} (concept mode).
 */
final class BundledModel {
    static final String FILE = "examples/sam-demo-synthetic.pth";
    /** A tiny SAM 2.1 (with its {@code .layout.json}), see tools/sam2_demo_model/README.md. */
    static final String SAM2_FILE = "examples/sam2-demo-synthetic.pt";
    /**
     * A tiny SAM 3 (with its own vocabulary beside it, {@code .vocab.txt.gz}), see tools/sam3_demo_model/README.md.
     */
    static final String SAM3_FILE = "examples/sam3-demo-synthetic.pt";

    private BundledModel() {}

    /** The bundled SAM model. */
    static Path locate() {
        return locate(FILE);
    }

    /**
     * Looks for a bundled file in {@code $SAMSTREAM_HOME} (the launcher sets it), next to the jar's checkout
     * ({@code stream/target/samstream.jar} -> the root) and in the working directory.
     */
    static Path locate(String file) {
        List<Path> candidates = new ArrayList<>();
        String home = System.getenv("SAMSTREAM_HOME");
        if (home != null && !home.isBlank()) {
            candidates.add(Path.of(home).resolve(file));
        }
        try {
            Path jar = Path.of(BundledModel.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path p = jar.getParent(); p != null; p = p.getParent()) {
                candidates.add(p.resolve(file));
            }
        } catch (URISyntaxException | RuntimeException e) {
            // Not from a file: only the other places.
        }
        candidates.add(Path.of(file).toAbsolutePath());
        for (Path c : candidates) {
            if (Files.isRegularFile(c)) {
                return c.normalize();
            }
        }
        throw new IllegalStateException("no checkpoint: set samstream.model.checkpoint (the bundled " + file
                + " was not found; run from the samstream checkout or set SAMSTREAM_HOME)");
    }

    /** The model's name in mask records: the checkpoint's file name without its extension. */
    static String modelName(Path checkpoint) {
        String n = checkpoint.getFileName().toString();
        int dot = n.lastIndexOf('.');
        return dot > 0 ? n.substring(0, dot) : n;
    }
}
