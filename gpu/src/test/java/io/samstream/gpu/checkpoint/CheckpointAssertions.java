package io.samstream.gpu.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import org.junit.jupiter.api.function.Executable;

/** Shared assertions for the checkpoint tests. */
final class CheckpointAssertions {
    private CheckpointAssertions() {}

    /** Loading {@code file} fails with a message that starts with the file and contains every fragment. */
    static CheckpointException assertLoadFails(Path file, String... fragments) {
        return assertFails(file, () -> CheckpointLoader.load(file), fragments);
    }

    static CheckpointException assertFails(Path file, Executable action, String... fragments) {
        CheckpointException e = assertThrows(CheckpointException.class, action);
        String message = e.getMessage();
        assertTrue(message.startsWith(file.toString() + ": "), "message should name the file: " + message);
        for (String fragment : fragments) {
            assertTrue(message.contains(fragment), "message should contain '" + fragment + "': " + message);
        }
        return e;
    }

    static void assertTensor(Tensor actual, int[] shape, float... values) {
        assertArrayEquals(shape, actual.shape(), "shape");
        assertEquals(values.length, actual.size(), "size");
        for (int i = 0; i < values.length; i++) {
            assertEquals(Float.floatToIntBits(values[i]), Float.floatToIntBits(actual.data()[i]),
                    "value " + i + ": expected " + values[i] + " got " + actual.data()[i]);
        }
    }
}
