package io.samstream.gpu.checkpoint;

import io.samstream.gpu.tensor.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Test-only safetensors writer: 8-byte little-endian header length, JSON header with
 * {@code __metadata__} first (as the Python library writes it), the header padded with spaces to a
 * multiple of 8, then the tensor bytes in order.
 */
final class SafetensorsWriter {

    private record Entry(String dtype, int[] shape, byte[] bytes) {}

    private final Map<String, Entry> entries = new LinkedHashMap<>();

    SafetensorsWriter f32(String name, Tensor t) {
        ByteBuffer b = le(4 * t.size());
        for (float v : t.data()) {
            b.putFloat(v);
        }
        return raw(name, "F32", t.shape(), b.array());
    }

    SafetensorsWriter f64(String name, int[] shape, double... values) {
        ByteBuffer b = le(8 * values.length);
        for (double v : values) {
            b.putDouble(v);
        }
        return raw(name, "F64", shape, b.array());
    }

    /** F16 or BF16 from raw 16-bit patterns. */
    SafetensorsWriter bits16(String name, String dtype, int[] shape, short... bits) {
        ByteBuffer b = le(2 * bits.length);
        for (short s : bits) {
            b.putShort(s);
        }
        return raw(name, dtype, shape, b.array());
    }

    /** Any dtype code and bytes, which may disagree with the shape, for tests. */
    SafetensorsWriter raw(String name, String dtype, int[] shape, byte[] bytes) {
        entries.put(name, new Entry(dtype, shape.clone(), bytes));
        return this;
    }

    byte[] toBytes() {
        StringBuilder json = new StringBuilder("{\"__metadata__\":{\"format\":\"pt\"}");
        long offset = 0;
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        for (Map.Entry<String, Entry> e : entries.entrySet()) {
            Entry t = e.getValue();
            String shape = Arrays.stream(t.shape()).mapToObj(String::valueOf).collect(Collectors.joining(","));
            json.append(",\"").append(e.getKey()).append("\":{\"dtype\":\"").append(t.dtype())
                    .append("\",\"shape\":[").append(shape).append("],\"data_offsets\":[").append(offset)
                    .append(',').append(offset + t.bytes().length).append("]}");
            offset += t.bytes().length;
            data.writeBytes(t.bytes());
        }
        json.append('}');
        while (json.length() % 8 != 0) {
            json.append(' ');
        }
        byte[] header = json.toString().getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(le(8).putLong(header.length).array());
        all.writeBytes(header);
        all.writeBytes(data.toByteArray());
        return all.toByteArray();
    }

    void write(Path file) throws IOException {
        Files.write(file, toBytes());
    }

    static void write(Path file, Map<String, Tensor> tensors) throws IOException {
        SafetensorsWriter w = new SafetensorsWriter();
        tensors.forEach(w::f32);
        w.write(file);
    }

    private static ByteBuffer le(int bytes) {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }
}
