package io.samstream.gpu.checkpoint;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * complex64 tensors (SAM 3 saves its ViT's rotary tables {@code freqs_cis} as such) load as float32 tensors with a
 * trailing dimension of 2, real then imaginary, as torch's {@code view_as_real} shows them, strided views included.
 */
class ComplexTensorCheckpointTest {
    @TempDir
    Path dir;

    @Test
    void complexTensorsLoadAsRealAndImaginaryPairs() throws IOException {
        TorchSaveWriter w = new TorchSaveWriter("archive");
        // 4 complex values 1+2i, 3+4i, 5+6i, 7+8i
        float[] pairs = {1, 2, 3, 4, 5, 6, 7, 8};
        ByteBuffer b = ByteBuffer.allocate(4 * pairs.length).order(w.order());
        for (float v : pairs) {
            b.putFloat(v);
        }
        TorchSaveWriter.Storage complex = w.storage("ComplexFloatStorage", 4, b.array());
        Map<String, Object> tensors = new LinkedHashMap<>();
        tensors.put("blocks.0.attn.freqs_cis", TorchSaveWriter.tensor(complex, 2, 2));
        // the transpose of that 2 x 2 complex matrix, a strided view of the same storage
        tensors.put("transposed", TorchSaveWriter.tensor(complex, 0, new int[] {2, 2}, new long[] {1, 2}));
        tensors.put("weight", TorchSaveWriter.tensor(w.floatStorage(0.5f, -1f), 2));
        Path file = dir.resolve("complex.pt");
        w.write(file, TorchSaveWriter.stateDict(tensors));

        StateDict sd = CheckpointLoader.load(file);

        Tensor cis = sd.get("blocks.0.attn.freqs_cis");
        assertArrayEquals(new int[] {2, 2, 2}, cis.shape());
        assertArrayEquals(pairs, cis.data());
        Tensor t = sd.get("transposed");
        assertArrayEquals(new int[] {2, 2, 2}, t.shape());
        assertArrayEquals(new float[] {1, 2, 5, 6, 3, 4, 7, 8}, t.data());
        assertArrayEquals(new float[] {0.5f, -1f}, sd.get("weight").data());
    }
}
