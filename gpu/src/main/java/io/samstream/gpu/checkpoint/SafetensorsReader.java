package io.samstream.gpu.checkpoint;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads safetensors files: an 8-byte little-endian header length, a JSON header
 * {@code {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}}, then the raw
 * little-endian tensor bytes, offsets counted from the end of the header.
 *
 * <p>Before anything is allocated, every tensor's bytes must lie inside the file and no two tensors may
 * share bytes, so the tensors never cost more than the file holds (fp32 widening aside).
 */
final class SafetensorsReader {
    private static final Logger log = LoggerFactory.getLogger(SafetensorsReader.class);

    /** The safetensors format's own limit on the header size. */
    static final long MAX_HEADER_BYTES = 100L << 20;
    private static final int CHUNK_BYTES = 1 << 20;
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private SafetensorsReader() {}

    static LoadedTensors read(Path file) {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long fileSize = channel.size();
            if (fileSize < 8) {
                throw new CheckpointException(file, "is " + fileSize + " bytes long, too short for a safetensors"
                        + " header; the file is truncated");
            }
            ByteBuffer lengthBytes = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            readFully(file, channel, lengthBytes, 0);
            long headerLength = lengthBytes.flip().getLong();
            if (headerLength < 0 || headerLength > MAX_HEADER_BYTES) {
                throw new CheckpointException(file, "declares a safetensors header of " + headerLength
                        + " bytes, which is not plausible (the format allows at most " + MAX_HEADER_BYTES + ")");
            }
            if (headerLength > fileSize - 8) {
                throw new CheckpointException(file, "declares a safetensors header of " + headerLength
                        + " bytes but only " + (fileSize - 8) + " follow; the file is truncated");
            }
            ByteBuffer headerBytes = ByteBuffer.allocate((int) headerLength);
            readFully(file, channel, headerBytes, 8);
            JsonNode header = parseHeader(file, headerBytes.array());
            long dataStart = 8 + headerLength;
            return readTensors(file, channel, header, dataStart, fileSize - dataStart);
        } catch (IOException e) {
            throw new CheckpointException(file, "cannot be read: " + e.getMessage(), e);
        }
    }

    private static JsonNode parseHeader(Path file, byte[] bytes) {
        JsonNode header;
        try {
            header = JSON.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw new CheckpointException(file, "has a safetensors header that is not valid JSON: "
                    + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new CheckpointException(file, "has an unreadable safetensors header: " + e.getMessage(), e);
        }
        if (header == null || !header.isObject()) {
            throw new CheckpointException(file, "has a safetensors header that is not a JSON object");
        }
        return header;
    }

    private static LoadedTensors readTensors(Path file, FileChannel channel, JsonNode header, long dataStart,
                                             long dataSize) throws IOException {
        // Every entry is checked, and the entries together, before any tensor is allocated.
        Map<String, Entry> entries = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> field : header.properties()) {
            String name = field.getKey();
            if (name.equals("__metadata__")) {
                log.debug("{}: safetensors metadata {}", file, field.getValue());
                continue;
            }
            Entry e = Entry.parse(file, name, field.getValue());
            long bytes = e.numel() * e.type().byteSize();
            if (e.end() - e.begin() != bytes) {
                throw new CheckpointException(file, "tensor " + name + " has data_offsets [" + e.begin() + ", "
                        + e.end() + "], " + (e.end() - e.begin()) + " bytes, but its shape and dtype need " + bytes);
            }
            if (e.end() > dataSize) {
                throw new CheckpointException(file, "tensor " + name + " ends at data byte " + e.end()
                        + " but the file holds only " + dataSize + " bytes of tensor data; the file is truncated");
            }
            entries.put(name, e);
        }
        checkDisjoint(file, entries);

        Map<String, Tensor> tensors = new LinkedHashMap<>();
        Map<ElementType, Integer> sourceTypes = new EnumMap<>(ElementType.class);
        ByteBuffer chunk = ByteBuffer.allocate(CHUNK_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (Map.Entry<String, Entry> named : entries.entrySet()) {
            Entry e = named.getValue();
            float[] values = new float[(int) e.numel()];
            long position = dataStart + e.begin();
            int filled = 0;
            while (filled < values.length) {
                int count = Math.min(values.length - filled, CHUNK_BYTES / e.type().byteSize());
                chunk.clear().limit(count * e.type().byteSize());
                readFully(file, channel, chunk, position);
                chunk.flip();
                e.type().decode(chunk, values, filled, count);
                filled += count;
                position += (long) count * e.type().byteSize();
            }
            tensors.put(named.getKey(), new Tensor(values, e.shape()));
            sourceTypes.merge(e.type(), 1, Integer::sum);
        }
        return new LoadedTensors("safetensors", Collections.unmodifiableMap(tensors), sourceTypes, tensors.size());
    }

    /**
     * Tensors may not share bytes (the format forbids it), so together they never hold more than the file:
     * a small file cannot name the same gigabyte for many tensors.
     */
    private static void checkDisjoint(Path file, Map<String, Entry> entries) {
        List<Map.Entry<String, Entry>> byOffset = new ArrayList<>(entries.entrySet());
        byOffset.sort(Comparator.comparingLong((Map.Entry<String, Entry> e) -> e.getValue().begin())
                .thenComparingLong(e -> e.getValue().end()));
        Map.Entry<String, Entry> previous = null;
        for (Map.Entry<String, Entry> e : byOffset) {
            if (e.getValue().end() == e.getValue().begin()) {
                continue; // an empty tensor holds no bytes
            }
            if (previous != null && e.getValue().begin() < previous.getValue().end()) {
                throw new CheckpointException(file, "tensors " + previous.getKey() + " (data_offsets ["
                        + previous.getValue().begin() + ", " + previous.getValue().end() + "]) and " + e.getKey()
                        + " ([" + e.getValue().begin() + ", " + e.getValue().end() + "]) overlap; safetensors"
                        + " tensors may not share bytes, so the file is refused");
            }
            previous = e;
        }
    }

    private static void readFully(Path file, FileChannel channel, ByteBuffer into, long position) throws IOException {
        while (into.hasRemaining()) {
            int n = channel.read(into, position);
            if (n < 0) {
                throw new CheckpointException(file, "ends at byte " + position + " in the middle of its data;"
                        + " the file is truncated");
            }
            position += n;
        }
    }

    /** One header entry, validated. */
    private record Entry(ElementType type, int[] shape, long numel, long begin, long end) {

        static Entry parse(Path file, String name, JsonNode node) {
            if (!node.isObject()) {
                throw bad(file, name, "is not a JSON object");
            }
            JsonNode dtype = node.get("dtype");
            if (dtype == null || !dtype.isTextual()) {
                throw bad(file, name, "has no dtype string");
            }
            ElementType type = elementType(file, name, dtype.asText());
            JsonNode shapeNode = node.get("shape");
            if (shapeNode == null || !shapeNode.isArray()) {
                throw bad(file, name, "has no shape array");
            }
            int[] shape = new int[shapeNode.size()];
            long numel = 1;
            for (int d = 0; d < shape.length; d++) {
                JsonNode dim = shapeNode.get(d);
                if (!dim.canConvertToInt() || !dim.isIntegralNumber() || dim.asInt() < 0) {
                    throw bad(file, name, "has shape " + shapeNode + ", whose entries must be non-negative ints");
                }
                shape[d] = dim.asInt();
                numel *= shape[d];
                if (numel > Integer.MAX_VALUE - 8) {
                    throw bad(file, name, "has shape " + shapeNode + ", more values than one Java array can hold");
                }
            }
            JsonNode offsets = node.get("data_offsets");
            if (offsets == null || !offsets.isArray() || offsets.size() != 2
                    || !offsets.get(0).canConvertToLong() || !offsets.get(1).canConvertToLong()
                    || !offsets.get(0).isIntegralNumber() || !offsets.get(1).isIntegralNumber()) {
                throw bad(file, name, "has no data_offsets [begin, end]");
            }
            long begin = offsets.get(0).asLong();
            long end = offsets.get(1).asLong();
            if (begin < 0 || end < begin) {
                throw bad(file, name, "has data_offsets " + offsets + ", which are not 0 <= begin <= end");
            }
            return new Entry(type, shape, numel, begin, end);
        }

        private static ElementType elementType(Path file, String name, String dtype) {
            ElementType type = switch (dtype) {
                case "F64" -> ElementType.FLOAT64;
                case "F32" -> ElementType.FLOAT32;
                case "F16" -> ElementType.FLOAT16;
                case "BF16" -> ElementType.BFLOAT16;
                case "I64" -> ElementType.INT64;
                case "I32" -> ElementType.INT32;
                case "I16" -> ElementType.INT16;
                case "I8" -> ElementType.INT8;
                case "U8" -> ElementType.UINT8;
                case "BOOL" -> ElementType.BOOL;
                default -> throw bad(file, name, "has dtype " + dtype
                        + ", which is not supported; model weights must be F32, F16, BF16 or F64");
            };
            if (!type.isFloatingPoint()) {
                throw bad(file, name, "holds " + dtype + " (" + type
                        + ") values; model weights must be F32, F16, BF16 or F64");
            }
            return type;
        }

        private static CheckpointException bad(Path file, String name, String problem) {
            return new CheckpointException(file, "safetensors entry for tensor " + name + " " + problem);
        }
    }
}
