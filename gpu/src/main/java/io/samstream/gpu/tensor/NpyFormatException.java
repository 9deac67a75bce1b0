package io.samstream.gpu.tensor;

import io.samstream.config.OneLine;
import java.io.IOException;

/**
 * A {@code .npy}/{@code .npz} file we cannot load; the message names the source and the problem on one
 * line (what the file holds, e.g. its header, with control characters escaped).
 */
public class NpyFormatException extends IOException {
    public NpyFormatException(String source, String problem) {
        super(source + ": " + OneLine.of(problem));
    }
}
