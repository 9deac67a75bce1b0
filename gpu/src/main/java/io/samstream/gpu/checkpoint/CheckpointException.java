package io.samstream.gpu.checkpoint;

import java.nio.file.Path;

/**
 * A checkpoint that cannot be used: unreadable, not a checkpoint, unsafe, or not a SAM model.
 * The message always names the file and what is wrong with it, so it can be shown to a user as is.
 */
public class CheckpointException extends RuntimeException {
    public CheckpointException(Path file, String problem) {
        super(file + ": " + problem);
    }

    public CheckpointException(Path file, String problem, Throwable cause) {
        super(file + ": " + problem, cause);
    }
}
