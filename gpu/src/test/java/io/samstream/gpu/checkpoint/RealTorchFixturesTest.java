package io.samstream.gpu.checkpoint;

import static io.samstream.gpu.checkpoint.CheckpointAssertions.assertLoadFails;
import static io.samstream.gpu.checkpoint.CheckpointAssertions.assertTensor;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.model.RandomSamWeights;
import io.samstream.gpu.model.SamCheckpointSchema;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Files written by real torch.save (torch 2.11) and transformers' save_pretrained (5.17); see
 * tools/fixtures/make_checkpoint_fixtures.py.
 */
class RealTorchFixturesTest {

    private static Path fixture(String name) {
        try {
            return Path.of(RealTorchFixturesTest.class.getResource("/fixtures/checkpoint/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void transformersSamModelLoadsUnderMetaNamesFromBothFormats() throws IOException {
        JsonNode expected = new ObjectMapper().readTree(fixture("expected.json").toFile());
        List<String> hfKeys = new ArrayList<>();
        expected.fieldNames().forEachRemaining(hfKeys::add);
        Map<String, String> metaNames = HuggingFaceSamKeys.metaNames(hfKeys);
        assertEquals(hfKeys.size(), metaNames.size(), "every key transformers 5.17 writes is in the table");

        StateDict bin = CheckpointLoader.load(fixture("hf.bin"));
        StateDict safetensors = CheckpointLoader.load(fixture("hf.safetensors"));

        for (StateDict sd : List.of(bin, safetensors)) {
            assertEquals(SamCheckpointSchema.expectedShapes(RandomSamWeights.tinyConfig()).keySet(), sd.keys());
            assertEquals(RandomSamWeights.tinyConfig(), SamConfigInference.infer(sd));
        }
        for (Map.Entry<String, JsonNode> e : expected.properties()) {
            String meta = metaNames.get(e.getKey());
            Tensor t = bin.get(meta);
            JsonNode shape = e.getValue().get(0);
            int[] expectedShape = new int[shape.size()];
            for (int d = 0; d < expectedShape.length; d++) {
                expectedShape[d] = shape.get(d).asInt();
            }
            assertArrayEquals(expectedShape, t.shape(), e.getKey());
            double sum = 0;
            for (float v : t.data()) {
                sum += v;
            }
            double expectedSum = e.getValue().get(1).asDouble();
            assertEquals(expectedSum, sum, 1e-9 * (1 + Math.abs(expectedSum)), e.getKey() + " sum");
            assertEquals((float) e.getValue().get(2).asDouble(), t.data()[0], e.getKey() + " first value");
            assertArrayEquals(t.data(), safetensors.get(meta).data(), meta + " equal in both formats");
        }
    }

    @Test
    void tiedBufferIsReadOnce() {
        LoadedTensors loaded = TorchZipReader.read(fixture("hf.bin"));
        assertEquals(203, loaded.tensors().size());
        assertEquals(202, loaded.storagesRead());
    }

    @Test
    void halfBfloat16DoubleAndStridedViewsFromProtocol4() {
        LoadedTensors loaded = TorchZipReader.read(fixture("views.pth"));
        Map<String, Tensor> t = loaded.tensors();

        float[] x = {-0.5f, -0.25f, 0f, 0.25f, 0.5f, 0.75f};
        assertTensor(t.get("h"), new int[] {6}, x);
        assertTensor(t.get("b"), new int[] {6}, x);
        assertTensor(t.get("d"), new int[] {6}, x);
        assertTensor(t.get("t"), new int[] {4, 3}, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11);
        assertTensor(t.get("s"), new int[] {2, 2}, 4, 6, 8, 10);
        assertEquals(4, loaded.storagesRead(), "t and s view one storage");
    }

    @Test
    void legacyFormatIsRefusedWithAHint() {
        assertLoadFails(fixture("legacy.pth"), "legacy", "re-save");
    }

    @Test
    void picklesThatWouldRunCodeAreRefused() {
        assertLoadFails(fixture("evil.pth"), "evil/data.pkl", "Python global posix.system");
    }
}
