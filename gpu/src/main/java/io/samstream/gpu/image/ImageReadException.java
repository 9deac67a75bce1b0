package io.samstream.gpu.image;

import java.nio.file.Path;

/**
 * An image file that cannot be used: missing, a directory, unreadable, corrupt, truncated or in a format
 * or pixel layout we do not decode. The message is one line naming the file and the problem, so it can be
 * shown to a user as is.
 */
public class ImageReadException extends IllegalArgumentException {
    public ImageReadException(Path file, String problem) {
        super(file + ": " + problem);
    }

    public ImageReadException(Path file, String problem, Throwable cause) {
        super(file + ": " + problem, cause);
    }
}
