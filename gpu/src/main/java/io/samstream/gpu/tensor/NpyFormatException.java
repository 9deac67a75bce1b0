package io.samstream.gpu.tensor;

import java.io.IOException;

/** A {@code .npy}/{@code .npz} file we cannot load; the message names the source and the problem on one line. */
public class NpyFormatException extends IOException {
    public NpyFormatException(String source, String problem) {
        super(source + ": " + problem);
    }
}
