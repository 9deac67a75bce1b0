package io.samstream.gpu.checkpoint;

import static io.samstream.gpu.checkpoint.CheckpointAssertions.assertLoadFails;
import static io.samstream.gpu.checkpoint.CheckpointAssertions.assertTensor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsCheckpointTest {
    @TempDir
    Path dir;

    @Test
    void floatDtypesRoundTripAndMetadataIsNotATensor() throws IOException {
        Path file = dir.resolve("model.safetensors");
        new SafetensorsWriter()
                .f32("a.weight", new Tensor(new float[] {1.5f, -2f, 3f, 1e-40f, 5f, 6f}, 3, 2))
                .bits16("b", "F16", new int[] {2, 2}, (short) 0x3C00, (short) 0x8001, (short) 0x7BFF, (short) 0xFC00)
                .bits16("c", "BF16", new int[] {3}, (short) 0x3F80, (short) 0x4049, (short) 0xC040)
                .f64("d", new int[] {2}, 0.1, 1e300)
                .f32("scalar", new Tensor(new float[] {7f}))
                .write(file);

        StateDict sd = CheckpointLoader.load(file);

        assertEquals(List.of("a.weight", "b", "c", "d", "scalar"), new ArrayList<>(sd.keys()));
        assertTensor(sd.get("a.weight"), new int[] {3, 2}, 1.5f, -2f, 3f, 1e-40f, 5f, 6f);
        assertTensor(sd.get("b"), new int[] {2, 2}, 1f, -0x1p-24f, 65504f, Float.NEGATIVE_INFINITY);
        assertTensor(sd.get("c"), new int[] {3}, 1f, 3.140625f, -3f);
        assertTensor(sd.get("d"), new int[] {2}, (float) 0.1, Float.POSITIVE_INFINITY);
        assertTensor(sd.get("scalar"), new int[] {}, 7f);
    }

    @Test
    void largeTensorsSpanSeveralReadChunks() throws IOException {
        float[] values = new float[600_000];
        for (int i = 0; i < values.length; i++) {
            values[i] = i;
        }
        Path file = dir.resolve("big.safetensors");
        new SafetensorsWriter().f32("small", new Tensor(new float[] {-1f}, 1))
                .f32("big", new Tensor(values, 600, 1000)).write(file);

        Tensor big = CheckpointLoader.load(file).get("big");

        assertEquals(599_999f, big.data()[599_999]);
        assertEquals(262_144f, big.data()[262_144]);
        assertEquals(0f, big.data()[0]);
    }

    @Test
    void truncatedDataNamesTheTensor() throws IOException {
        Path file = dir.resolve("cut.safetensors");
        byte[] whole = new SafetensorsWriter()
                .f32("first", new Tensor(new float[] {1f, 2f}, 2))
                .f32("last", new Tensor(new float[] {3f, 4f, 5f}, 3)).toBytes();
        Files.write(file, Arrays.copyOf(whole, whole.length - 4));

        assertLoadFails(file, "tensor last ends at data byte 20", "only 16 bytes", "truncated");
    }

    @Test
    void truncatedHeaderIsReported() throws IOException {
        Path file = dir.resolve("header.safetensors");
        byte[] whole = new SafetensorsWriter().f32("a", new Tensor(new float[] {1f}, 1)).toBytes();
        Files.write(file, Arrays.copyOf(whole, 30));

        assertLoadFails(file, "safetensors header of", "only 22 follow", "truncated");
    }

    @Test
    void invalidJsonHeaderIsReported() throws IOException {
        Path file = dir.resolve("json.safetensors");
        Files.write(file, withHeader("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]"));

        assertLoadFails(file, "safetensors header that is not valid JSON");
    }

    @Test
    void duplicateTensorNamesAreInvalidJson() throws IOException {
        Path file = dir.resolve("dup.safetensors");
        String entry = "{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}";
        Files.write(file, withHeader("{\"a\":" + entry + ",\"a\":" + entry + "}", 0, 0, 0, 0));

        assertLoadFails(file, "not valid JSON", "Duplicate field 'a'");
    }

    @Test
    void offsetsThatDisagreeWithTheShapeAreReported() throws IOException {
        Path file = dir.resolve("offsets.safetensors");
        new SafetensorsWriter().raw("w", "F32", new int[] {2, 2}, new byte[12]).write(file);

        assertLoadFails(file, "tensor w has data_offsets [0, 12], 12 bytes, but its shape and dtype need 16");
    }

    @Test
    void unsupportedAndIntegerDtypesNameTheTensor() throws IOException {
        Path fp8 = dir.resolve("fp8.safetensors");
        new SafetensorsWriter().raw("q.weight", "F8_E4M3", new int[] {1}, new byte[1]).write(fp8);
        assertLoadFails(fp8, "tensor q.weight", "dtype F8_E4M3, which is not supported");

        Path ints = dir.resolve("ints.safetensors");
        new SafetensorsWriter().raw("steps", "I64", new int[] {1}, new byte[8]).write(ints);
        assertLoadFails(ints, "tensor steps", "I64 (int64) values");
    }

    @Test
    void malformedEntriesAreReported() throws IOException {
        Path noShape = dir.resolve("noshape.safetensors");
        Files.write(noShape, withHeader("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 0, 0, 0, 0));
        assertLoadFails(noShape, "tensor a has no shape array");

        Path negative = dir.resolve("negative.safetensors");
        Files.write(negative, withHeader("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 0, 0, 0, 0));
        assertLoadFails(negative, "tensor a has shape [-1]");
    }

    /** A safetensors file with exactly this header text and these data bytes. */
    private static byte[] withHeader(String json, int... data) {
        byte[] header = json.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + header.length + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(header.length).put(header);
        for (int d : data) {
            b.put((byte) d);
        }
        return b.array();
    }

    @Test
    void overlappingTensorsAreRefusedBeforeAllocating() throws IOException {
        // Before: many tensors naming the same 64 MB, an OutOfMemoryError. Here 1000 names for 4 kB.
        StringBuilder json = new StringBuilder("{");
        for (int i = 0; i < 1000; i++) {
            json.append(i == 0 ? "" : ",").append("\"t").append(i)
                    .append("\":{\"dtype\":\"F32\",\"shape\":[1024],\"data_offsets\":[0,4096]}");
        }
        Path file = dir.resolve("overlap.safetensors");
        Files.write(file, withHeader(json.append('}').toString(), new int[4096]));

        CheckpointException e = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertLoadFails(file,
                "tensors t0 (data_offsets [0, 4096]) and t1 ([0, 4096]) overlap", "may not share bytes"));
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void partlyOverlappingTensorsAreRefused() throws IOException {
        Path file = dir.resolve("partly.safetensors");
        Files.write(file, withHeader("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                + "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", new int[12]));

        assertLoadFails(file, "tensors a (data_offsets [0, 8]) and b ([4, 12]) overlap");
    }
}
