package io.samstream.gpu.checkpoint;

import io.samstream.config.OneLine;
import java.nio.file.Path;

/**
 * A checkpoint that cannot be used: unreadable, not a checkpoint, unsafe, or not a SAM model.
 * The message always names the file and what is wrong with it, so it can be shown to a user as is: it
 * is one line, whatever names the file holds (their control characters are escaped, {@code \n},
 * {@code \u0007}).
 */
public class CheckpointException extends RuntimeException {
    public CheckpointException(Path file, String problem) {
        super(file + ": " + OneLine.of(problem));
    }

    public CheckpointException(Path file, String problem, Throwable cause) {
        super(file + ": " + OneLine.of(problem), cause);
    }
}
