package io.samstream.gpu.tensor;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.samstream.testkit.FuzzBounds;
import java.io.ByteArrayInputStream;

/** Fuzz target of the .npy reader: an array or a one-line {@link NpyFormatException} (see CheckpointFuzzTest). */
class NpyFuzzTest {
    @FuzzTest(maxDuration = "10m")
    void npy(byte[] file) {
        FuzzBounds.check(() -> Npy.read(new ByteArrayInputStream(file), "fuzz.npy"), NpyFormatException.class);
    }
}
