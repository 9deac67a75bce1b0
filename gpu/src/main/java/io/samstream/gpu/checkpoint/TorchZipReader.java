package io.samstream.gpu.checkpoint;

import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;

/**
 * Reads the zip archives torch.save writes (PyTorch 1.6 and later): {@code <prefix>/data.pkl}, a pickle
 * describing the objects with tensors as references to storages, and {@code <prefix>/data/<key>}, one
 * raw record per storage. The prefix is "archive" or the file's stem depending on the torch version.
 *
 * <p>The pickle is read with {@link RestrictedUnpickler}, so a hostile file is refused before any
 * storage is touched. Storages are then streamed straight into fp32 arrays (vit_h is 2.5 GB; the file
 * is never held in memory whole), each read once however many tensors view it.
 *
 * <p>What a file may cost is settled before anything is allocated: each storage must be a record of
 * exactly the bytes its declared element count needs; each view must lie inside its storage without
 * broadcasting (stride 0) or overlapping itself; the records read may not decompress to more than
 * {@link #MAX_EXPANSION} times the file; the tensors together may hold at most twice the elements of
 * their storages (tied weights); and the fp32 arrays must fit the JVM's heap. Every record read is
 * checked against its zip CRC-32, so a corrupt byte is an error naming the record, not other weights.
 */
final class TorchZipReader {
    /** A SAM state_dict's pickle is about 100 kB. */
    static final long MAX_PICKLE_BYTES = 64L << 20;
    /**
     * Bytes the records read may decompress to, per byte of file. torch.save stores records uncompressed
     * (ratio 1); a re-zipped archive of weights deflates far less than this. Plus {@link #SLACK_BYTES}.
     */
    static final long MAX_EXPANSION = 16;
    private static final long SLACK_BYTES = 1L << 20;
    private static final int CHUNK_BYTES = 1 << 20; // a multiple of every element size

    private TorchZipReader() {}

    static LoadedTensors read(Path file) {
        ZipFile zip = open(file);
        try (zip) {
            long budget = Math.addExact(Math.multiplyExact(Files.size(file), MAX_EXPANSION), SLACK_BYTES);
            ZipEntry pickleEntry = findPickle(file, zip);
            String prefix = pickleEntry.getName().substring(0, pickleEntry.getName().length() - "data.pkl".length());
            ByteOrder order = byteOrder(file, zip, prefix);
            byte[] pickle = readRecord(file, zip, pickleEntry, MAX_PICKLE_BYTES,
                    "a state_dict's pickle is far smaller");
            Object root = RestrictedUnpickler.load(file, pickleEntry.getName(), pickle);
            Map<String, TensorRef> refs = StateDictLocator.locate(file, root);
            return materialize(file, zip, prefix, order, refs, budget - pickle.length);
        } catch (IOException e) {
            throw new CheckpointException(file, "cannot read the zip archive: " + e.getMessage(), e);
        }
    }

    private static ZipFile open(Path file) {
        try {
            return new ZipFile(file.toFile());
        } catch (ZipException e) {
            throw new CheckpointException(file, "starts like a zip archive (a PyTorch checkpoint) but its zip"
                    + " directory cannot be read (" + e.getMessage() + "); the file is probably truncated,"
                    + " e.g. an interrupted download", e);
        } catch (IOException e) {
            throw new CheckpointException(file, "cannot be opened as a zip archive: " + e.getMessage(), e);
        }
    }

    private static ZipEntry findPickle(Path file, ZipFile zip) {
        ZipEntry best = null;
        List<String> names = new ArrayList<>();
        boolean torchScript = false;
        for (Enumeration<? extends ZipEntry> en = zip.entries(); en.hasMoreElements(); ) {
            ZipEntry e = en.nextElement();
            String name = e.getName();
            if (names.size() < 8) {
                names.add(name);
            }
            torchScript |= name.endsWith("/constants.pkl") || name.contains("/code/");
            if (name.equals("data.pkl") || name.endsWith("/data.pkl")) {
                if (best == null || depth(name) < depth(best.getName())) {
                    best = e;
                }
            }
        }
        if (torchScript) {
            throw new CheckpointException(file, "is a TorchScript archive (torch.jit.save), which holds code"
                    + " rather than a state_dict; save the weights with torch.save(model.state_dict(), path)");
        }
        if (best == null) {
            throw new CheckpointException(file, "is a zip archive without a data.pkl record, so not a"
                    + " torch.save checkpoint (first entries: " + names + ")");
        }
        return best;
    }

    private static int depth(String name) {
        return (int) name.chars().filter(c -> c == '/').count();
    }

    private static ByteOrder byteOrder(Path file, ZipFile zip, String prefix) throws IOException {
        ZipEntry e = zip.getEntry(prefix + "byteorder");
        if (e == null) {
            return ByteOrder.LITTLE_ENDIAN; // archives written before the record existed: little endian
        }
        String value = new String(readRecord(file, zip, e, 16, "it holds 'little' or 'big'"),
                StandardCharsets.US_ASCII).trim();
        return switch (value) {
            case "little" -> ByteOrder.LITTLE_ENDIAN;
            case "big" -> ByteOrder.BIG_ENDIAN;
            default -> throw new CheckpointException(file, "record " + e.getName() + " says '" + value
                    + "' where 'little' or 'big' was expected");
        };
    }

    /**
     * A whole small record, at most {@code max} bytes however large the zip directory or the decompressed
     * data claim to be, checked against its CRC-32.
     */
    private static byte[] readRecord(Path file, ZipFile zip, ZipEntry entry, long max, String why) {
        if (entry.getSize() > max) {
            throw new CheckpointException(file, "record " + entry.getName() + " is " + entry.getSize()
                    + " bytes; " + why + ", so the file is refused");
        }
        byte[] bytes;
        try (InputStream in = zip.getInputStream(entry)) {
            bytes = in.readNBytes((int) (entry.getSize() >= 0 ? entry.getSize() : max) + 1);
        } catch (IOException e) {
            throw new CheckpointException(file, "cannot read record " + entry.getName() + ": " + e.getMessage()
                    + " (the file may be truncated or corrupt)", e);
        }
        if (bytes.length > max || (entry.getSize() >= 0 && bytes.length != entry.getSize())) {
            throw new CheckpointException(file, "record " + entry.getName() + " decompresses to "
                    + (bytes.length > max ? "more than " + max : String.valueOf(bytes.length)) + " bytes"
                    + (entry.getSize() >= 0 ? " where the zip directory says " + entry.getSize() : "")
                    + "; the file is corrupt or hostile");
        }
        CRC32 crc = new CRC32();
        crc.update(bytes);
        checkCrc(file, entry, crc);
        return bytes;
    }

    private static void checkCrc(Path file, ZipEntry entry, CRC32 crc) {
        if (entry.getCrc() != -1 && crc.getValue() != entry.getCrc()) {
            throw new CheckpointException(file, "record " + entry.getName() + " fails its CRC-32 check (stored "
                    + String.format("%08x", entry.getCrc()) + ", computed " + String.format("%08x", crc.getValue())
                    + "); the file is corrupt - download or copy it again");
        }
    }

    /** A storage to read: its record, element type and count, and the tensors that view it. */
    private record Planned(ZipEntry entry, ElementType type, long elements, List<String> names) {}

    private static LoadedTensors materialize(Path file, ZipFile zip, String prefix, ByteOrder order,
                                             Map<String, TensorRef> refs, long budget) {
        // Which tensors view each storage, in file order.
        Map<String, List<String>> users = new LinkedHashMap<>();
        for (Map.Entry<String, TensorRef> e : refs.entrySet()) {
            users.computeIfAbsent(e.getValue().storage().key(), k -> new ArrayList<>()).add(e.getKey());
        }
        // Everything is checked and costed before the first array is allocated.
        List<Planned> plan = new ArrayList<>();
        long recordBytes = 0;
        long storageElements = 0;
        long tensorElements = 0;
        long gatheredElements = 0;
        for (Map.Entry<String, List<String>> u : users.entrySet()) {
            List<String> names = u.getValue();
            TensorRef first = refs.get(names.get(0));
            StorageRef storage = first.storage();
            ElementType type = first.dtype();
            for (String name : names) {
                checkUsable(file, name, refs.get(name), type);
            }
            long elements = elementCount(file, storage, type, names.get(0));
            for (String name : names) {
                TensorRef t = refs.get(name);
                TensorViews.check(file, name, t, elements);
                tensorElements += t.numel();
                if (!(names.size() == 1 && t.offset() == 0 && t.isContiguous() && t.numel() == elements)) {
                    gatheredElements += t.numel();
                }
            }
            ZipEntry entry = storageEntry(file, zip, prefix + "data/" + storage.key(), type, elements, names.get(0));
            recordBytes += entry.getSize();
            storageElements += elements;
            plan.add(new Planned(entry, type, elements, names));
        }
        checkBudget(file, refs.size(), recordBytes, budget, storageElements, tensorElements, gatheredElements);

        Map<String, Tensor> built = new LinkedHashMap<>();
        Map<ElementType, Integer> sourceTypes = new EnumMap<>(ElementType.class);
        for (Planned p : plan) {
            float[] data = readStorage(file, zip, p.entry(), p.type(), p.elements(), order, p.names().get(0));
            for (String name : p.names()) {
                TensorRef t = refs.get(name);
                boolean whole = p.names().size() == 1 && t.offset() == 0 && t.isContiguous()
                        && t.numel() == p.elements();
                built.put(name, new Tensor(whole ? data : TensorViews.gather(data, t), t.size()));
                sourceTypes.merge(p.type(), 1, Integer::sum);
            }
        }
        // Back to the order of the file's dict.
        Map<String, Tensor> ordered = new LinkedHashMap<>();
        for (String name : refs.keySet()) {
            ordered.put(name, built.get(name));
        }
        return new LoadedTensors("PyTorch zip archive", Collections.unmodifiableMap(ordered), sourceTypes,
                users.size());
    }

    /** Refuses a file whose tensors would cost far more than it holds, or more than the heap can give. */
    private static void checkBudget(Path file, int tensors, long recordBytes, long budget, long storageElements,
                                    long tensorElements, long gatheredElements) {
        if (recordBytes > budget) {
            throw new CheckpointException(file, "its storage records decompress to " + recordBytes + " bytes, more"
                    + " than " + MAX_EXPANSION + " times the file's size (a zip bomb?); torch.save stores records"
                    + " uncompressed, so the file is refused");
        }
        // Tied weights view one storage twice; more than twice the storages' elements is never a model.
        if (tensorElements > 2 * storageElements + (SLACK_BYTES >> 2)) {
            throw new CheckpointException(file, "its " + tensors + " tensors claim " + tensorElements
                    + " values but their storages hold only " + storageElements + "; so many repeated views are"
                    + " not a model's weights, so the file is refused");
        }
        long arrayBytes = 4 * (storageElements + gatheredElements);
        long heap = Runtime.getRuntime().maxMemory();
        if (heap != Long.MAX_VALUE && arrayBytes > heap) {
            throw new CheckpointException(file, "needs " + (arrayBytes >> 20) + " MiB of fp32 arrays but the JVM"
                    + " may use at most " + (heap >> 20) + " MiB; give it more memory (-Xmx)");
        }
    }

    private static void checkUsable(Path file, String name, TensorRef t, ElementType storageType) {
        if (t.dtype() != storageType) {
            throw new CheckpointException(file, "tensor " + name + " views storage data/" + t.storage().key()
                    + " as " + t.dtype() + " while another tensor views it as " + storageType);
        }
        if (!t.dtype().isFloatingPoint()) {
            throw new CheckpointException(file, "tensor " + name + " holds " + t.dtype()
                    + " values; model weights must be float32, float16, bfloat16 or float64");
        }
    }

    private static long elementCount(Path file, StorageRef storage, ElementType type, String usedBy) {
        if (!storage.untyped()) {
            return storage.numel();
        }
        if (storage.numel() % type.byteSize() != 0) {
            throw new CheckpointException(file, "untyped storage data/" + storage.key() + " (used by " + usedBy
                    + ") has " + storage.numel() + " bytes, not a whole number of " + type + " values");
        }
        return storage.numel() / type.byteSize();
    }

    /** The record holding a storage, which must hold exactly the bytes of its declared elements. */
    private static ZipEntry storageEntry(Path file, ZipFile zip, String record, ElementType type, long elements,
                                         String usedBy) {
        ZipEntry entry = zip.getEntry(record);
        if (entry == null) {
            throw new CheckpointException(file, "has no record " + record + " holding the data of tensor " + usedBy
                    + "; the archive is incomplete");
        }
        if (elements > Integer.MAX_VALUE - 8) {
            throw new CheckpointException(file, "storage " + record + " (used by " + usedBy + ") holds " + elements
                    + " values, more than one Java array can");
        }
        long bytes = elements * type.byteSize();
        if (entry.getSize() < 0) {
            throw new CheckpointException(file, "storage " + record + " (used by " + usedBy + ") has no size in"
                    + " the zip directory; the file is corrupt");
        }
        if (entry.getSize() < bytes) {
            throw truncated(file, record, usedBy, entry.getSize(), elements, type);
        }
        if (entry.getSize() > bytes) {
            throw new CheckpointException(file, "storage " + record + " (used by " + usedBy + ") holds "
                    + entry.getSize() + " bytes but declares " + elements + " " + type + " values, "
                    + bytes + " bytes; torch.save writes exactly that, so the file is corrupt");
        }
        return entry;
    }

    private static float[] readStorage(Path file, ZipFile zip, ZipEntry entry, ElementType type, long elements,
                                       ByteOrder order, String usedBy) {
        String record = entry.getName();
        long bytes = elements * type.byteSize();
        float[] out = new float[(int) elements];
        byte[] chunk = new byte[(int) Math.min(CHUNK_BYTES, Math.max(bytes, 8))];
        ByteBuffer buffer = ByteBuffer.wrap(chunk).order(order);
        CRC32 crc = new CRC32();
        try (InputStream in = zip.getInputStream(entry)) {
            long done = 0;
            int filled = 0;
            while (done < bytes) {
                int want = (int) Math.min(chunk.length, bytes - done);
                int n = in.readNBytes(chunk, 0, want);
                if (n < want) {
                    throw truncated(file, record, usedBy, done + n, elements, type);
                }
                crc.update(chunk, 0, want);
                buffer.clear().limit(want);
                int count = want / type.byteSize();
                type.decode(buffer, out, filled, count);
                filled += count;
                done += want;
            }
            if (in.read() != -1) {
                throw new CheckpointException(file, "storage " + record + " (used by " + usedBy + ") decompresses"
                        + " to more than the " + bytes + " bytes its zip directory says; the file is corrupt");
            }
        } catch (IOException e) {
            throw new CheckpointException(file, "cannot read storage " + record + " (used by " + usedBy + "): "
                    + e.getMessage() + "; the file may be truncated or corrupt", e);
        }
        checkCrc(file, entry, crc);
        return out;
    }

    private static CheckpointException truncated(Path file, String record, String usedBy, long have, long elements,
                                                 ElementType type) {
        return new CheckpointException(file, "storage " + record + " (used by " + usedBy + ") holds " + have
                + " bytes but its " + elements + " " + type + " values need " + elements * type.byteSize()
                + "; the file is truncated or corrupt");
    }
}
