package io.samstream.gpu.checkpoint;

import io.samstream.gpu.checkpoint.PickleWriter.Global;
import io.samstream.gpu.checkpoint.PickleWriter.OrderedDict;
import io.samstream.gpu.checkpoint.PickleWriter.Persistent;
import io.samstream.gpu.checkpoint.PickleWriter.Reduce;
import io.samstream.gpu.checkpoint.PickleWriter.Tuple;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * Test-only writer of the zip archives torch.save produces: {@code <prefix>/data.pkl},
 * {@code <prefix>/byteorder}, {@code <prefix>/data/<key>} (stored, uncompressed, in key order),
 * {@code <prefix>/version} and {@code <prefix>/.data/serialization_id}. Tensors pickle as
 * {@code torch._utils._rebuild_tensor_v2((persistent storage id), offset, size, stride, False,
 * OrderedDict())}, exactly the object graph torch's Tensor.__reduce_ex__ returns.
 */
final class TorchSaveWriter {
    static final Global REBUILD_TENSOR_V2 = new Global("torch._utils", "_rebuild_tensor_v2");
    static final Global REBUILD_PARAMETER = new Global("torch._utils", "_rebuild_parameter");

    /** A storage as its persistent id names it; its bytes become record data/<key>. */
    record Storage(String type, String key, long numel) {}

    private final String prefix;
    private int protocol = 2;
    private ByteOrder order = ByteOrder.LITTLE_ENDIAN;
    private final Map<String, byte[]> records = new TreeMap<>();
    private final Set<String> deflated = new HashSet<>();
    private int nextKey;

    TorchSaveWriter(String prefix) {
        this.prefix = prefix;
    }

    TorchSaveWriter protocol(int p) {
        this.protocol = p;
        return this;
    }

    TorchSaveWriter bigEndian() {
        this.order = ByteOrder.BIG_ENDIAN;
        return this;
    }

    ByteOrder order() {
        return order;
    }

    Storage floatStorage(float... values) {
        ByteBuffer b = buffer(4 * values.length);
        for (float v : values) {
            b.putFloat(v);
        }
        return storage("FloatStorage", values.length, b.array());
    }

    Storage doubleStorage(double... values) {
        ByteBuffer b = buffer(8 * values.length);
        for (double v : values) {
            b.putDouble(v);
        }
        return storage("DoubleStorage", values.length, b.array());
    }

    /** A HalfStorage or BFloat16Storage from raw 16-bit patterns. */
    Storage shortStorage(String type, short... bits) {
        ByteBuffer b = buffer(2 * bits.length);
        for (short s : bits) {
            b.putShort(s);
        }
        return storage(type, bits.length, b.array());
    }

    Storage longStorage(long... values) {
        ByteBuffer b = buffer(8 * values.length);
        for (long v : values) {
            b.putLong(v);
        }
        return storage("LongStorage", values.length, b.array());
    }

    /** A storage of any type with the given record bytes (which may disagree with numel, for tests). */
    Storage storage(String type, long numel, byte[] bytes) {
        String key = String.valueOf(nextKey++);
        records.put("data/" + key, bytes);
        return new Storage(type, key, numel);
    }

    private ByteBuffer buffer(int bytes) {
        return ByteBuffer.allocate(bytes).order(order);
    }

    /** The persistent id torch writes for a typed storage: ('storage', torch.XStorage, key, 'cpu', numel). */
    static Persistent persistentId(Storage s) {
        return new Persistent(Tuple.of("storage", new Global("torch", s.type()), s.key(), "cpu", s.numel()));
    }

    /** torch._utils._rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict()). */
    static Reduce tensor(Storage s, long offset, int[] size, long[] stride) {
        List<Object> sizes = new ArrayList<>();
        for (int d : size) {
            sizes.add(d);
        }
        List<Object> strides = new ArrayList<>();
        for (long d : stride) {
            strides.add(d);
        }
        Reduce hooks = new Reduce(PickleWriter.ORDERED_DICT, Tuple.of());
        return new Reduce(REBUILD_TENSOR_V2, Tuple.of(persistentId(s), offset, new Tuple(sizes),
                new Tuple(strides), false, hooks));
    }

    /** A contiguous tensor over a whole storage. */
    static Reduce tensor(Storage s, int... size) {
        return tensor(s, 0, size, contiguousStrides(size));
    }

    static long[] contiguousStrides(int... size) {
        long[] stride = new long[size.length];
        long step = 1;
        for (int d = size.length - 1; d >= 0; d--) {
            stride[d] = step;
            step *= size[d];
        }
        return stride;
    }

    /**
     * What model.state_dict() pickles as: an OrderedDict of the tensors whose __dict__ holds
     * {@code _metadata}, an OrderedDict of per-module {'version': 1} dicts.
     */
    static OrderedDict stateDict(Map<String, Object> tensors) {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("", versionDict());
        for (String key : tensors.keySet()) {
            int dot = key.lastIndexOf('.');
            if (dot > 0) {
                metadata.putIfAbsent(key.substring(0, dot), versionDict());
            }
        }
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("_metadata", new OrderedDict(metadata, null));
        return new OrderedDict(tensors, state);
    }

    private static Map<String, Object> versionDict() {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("version", 1);
        return v;
    }

    /** Adds fp32 storages for {@code tensors} and returns the state_dict object to pickle. */
    OrderedDict stateDictOf(Map<String, Tensor> tensors) {
        Map<String, Object> items = new LinkedHashMap<>();
        tensors.forEach((k, t) -> items.put(k, tensor(floatStorage(t.data()), t.shape())));
        return stateDict(items);
    }

    void putRecord(String name, byte[] bytes) {
        records.put(name, bytes);
    }

    void removeRecord(String name) {
        records.remove(name);
    }

    /** Writes record {@code name} (e.g. "data/0", "data.pkl") deflated, as torch.save never does. */
    TorchSaveWriter deflate(String name) {
        deflated.add(name);
        return this;
    }

    /** Writes the archive with {@code root} pickled as data.pkl. */
    void write(Path file, Object root) throws IOException {
        writeRaw(file, PickleWriter.dumps(root, protocol));
    }

    /** Writes the archive with {@code pickle} as data.pkl, byte for byte. */
    void writeRaw(Path file, byte[] pickle) throws IOException {
        try (OutputStream os = Files.newOutputStream(file); ZipOutputStream zip = new ZipOutputStream(os)) {
            put(zip, prefix + "/data.pkl", pickle, deflated.contains("data.pkl"));
            put(zip, prefix + "/byteorder", (order == ByteOrder.LITTLE_ENDIAN ? "little" : "big")
                    .getBytes(StandardCharsets.US_ASCII), false);
            for (Map.Entry<String, byte[]> r : records.entrySet()) {
                put(zip, prefix + "/" + r.getKey(), r.getValue(), deflated.contains(r.getKey()));
            }
            put(zip, prefix + "/version", "3\n".getBytes(StandardCharsets.US_ASCII), false);
            put(zip, prefix + "/.data/serialization_id", "1234567890".getBytes(StandardCharsets.US_ASCII), false);
        }
    }

    /** torch writes every record stored (uncompressed); tests may deflate some. */
    private static void put(ZipOutputStream zip, String name, byte[] bytes, boolean deflate) throws IOException {
        ZipEntry e = new ZipEntry(name);
        if (deflate) {
            e.setMethod(ZipEntry.DEFLATED);
            zip.putNextEntry(e);
            zip.write(bytes);
            zip.closeEntry();
            return;
        }
        e.setMethod(ZipEntry.STORED);
        e.setSize(bytes.length);
        e.setCompressedSize(bytes.length);
        CRC32 crc = new CRC32();
        crc.update(bytes);
        e.setCrc(crc.getValue());
        zip.putNextEntry(e);
        zip.write(bytes);
        zip.closeEntry();
    }
}
