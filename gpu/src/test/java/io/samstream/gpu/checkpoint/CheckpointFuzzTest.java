package io.samstream.gpu.checkpoint;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.samstream.testkit.FuzzBounds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Fuzz targets of the checkpoint readers: any bytes give tensors or a {@link CheckpointException} with
 * one line, within {@link FuzzBounds}. Seeds and every crash found: {@code CheckpointFuzzTestInputs/<target>/}
 * in the test resources, replayed by every build; {@code JAZZER_FUZZ=1} fuzzes (one target per run).
 */
class CheckpointFuzzTest {
    private static final Path DIR = FuzzBounds.tempDir();

    @FuzzTest(maxDuration = "10m")
    void unpickler(byte[] pickle) {
        // A pickle of None unpickles to null: a valid result (the zip reader then says it is no state_dict).
        FuzzBounds.check(() -> java.util.Optional.ofNullable(
                RestrictedUnpickler.load(DIR.resolve("fuzz.pth"), "archive/data.pkl", pickle)), CheckpointException.class);
    }

    @FuzzTest(maxDuration = "10m")
    void torchZip(byte[] file) throws IOException {
        Path pth = Files.write(DIR.resolve("fuzz.pth"), file);
        FuzzBounds.check(() -> TorchZipReader.read(pth), CheckpointException.class);
    }

    @FuzzTest(maxDuration = "10m")
    void safetensors(byte[] file) throws IOException {
        Path st = Files.write(DIR.resolve("fuzz.safetensors"), file);
        FuzzBounds.check(() -> SafetensorsReader.read(st), CheckpointException.class);
    }
}
