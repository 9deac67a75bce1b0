package io.samstream.gpu.checkpoint;

import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 */
final class TorchZipReader {
    private static final long MAX_PICKLE_BYTES = 1L << 30;
    private static final int CHUNK_BYTES = 1 << 20; // a multiple of every element size

    private TorchZipReader() {}

    static LoadedTensors read(Path file) {
        ZipFile zip = open(file);
        try (zip) {
            ZipEntry pickleEntry = findPickle(file, zip);
            String prefix = pickleEntry.getName().substring(0, pickleEntry.getName().length() - "data.pkl".length());
            ByteOrder order = byteOrder(file, zip, prefix);
            byte[] pickle = readPickle(file, zip, pickleEntry);
            Object root = RestrictedUnpickler.load(file, pickleEntry.getName(), pickle);
            Map<String, TensorRef> refs = StateDictLocator.locate(file, root);
            return materialize(file, zip, prefix, order, refs);
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
        String value;
        try (InputStream in = zip.getInputStream(e)) {
            value = new String(in.readNBytes(16), StandardCharsets.US_ASCII).trim();
        }
        return switch (value) {
            case "little" -> ByteOrder.LITTLE_ENDIAN;
            case "big" -> ByteOrder.BIG_ENDIAN;
            default -> throw new CheckpointException(file, "record " + e.getName() + " says '" + value
                    + "' where 'little' or 'big' was expected");
        };
    }

    private static byte[] readPickle(Path file, ZipFile zip, ZipEntry entry) {
        if (entry.getSize() > MAX_PICKLE_BYTES) {
            throw new CheckpointException(file, "record " + entry.getName() + " is " + entry.getSize()
                    + " bytes; a state_dict's pickle is far smaller, so the file is refused");
        }
        try (InputStream in = zip.getInputStream(entry)) {
            return in.readNBytes((int) MAX_PICKLE_BYTES);
        } catch (IOException e) {
            throw new CheckpointException(file, "cannot read record " + entry.getName() + ": " + e.getMessage()
                    + " (the file may be truncated or corrupt)", e);
        }
    }

    private static LoadedTensors materialize(Path file, ZipFile zip, String prefix, ByteOrder order,
                                             Map<String, TensorRef> refs) {
        // Which tensors view each storage, in file order.
        Map<String, List<String>> users = new LinkedHashMap<>();
        for (Map.Entry<String, TensorRef> e : refs.entrySet()) {
            users.computeIfAbsent(e.getValue().storage().key(), k -> new ArrayList<>()).add(e.getKey());
        }
        Map<String, Tensor> built = new LinkedHashMap<>();
        Map<ElementType, Integer> sourceTypes = new EnumMap<>(ElementType.class);
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
                if (t.numel() > Integer.MAX_VALUE - 8) {
                    throw new CheckpointException(file, "tensor " + name + " (" + t + ") has " + t.numel()
                            + " values, more than one Java array can hold");
                }
                if (t.endElement() > elements) {
                    throw new CheckpointException(file, "tensor " + name + " (" + t + ") reaches element "
                            + t.endElement() + " of storage data/" + storage.key() + ", which holds only "
                            + elements);
                }
            }
            float[] data = readStorage(file, zip, prefix + "data/" + storage.key(), type, elements, order, names.get(0));
            for (String name : names) {
                TensorRef t = refs.get(name);
                boolean whole = names.size() == 1 && t.offset() == 0 && t.isContiguous() && t.numel() == elements;
                built.put(name, new Tensor(whole ? data : TensorViews.gather(data, t), t.size()));
                sourceTypes.merge(type, 1, Integer::sum);
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

    private static float[] readStorage(Path file, ZipFile zip, String record, ElementType type, long elements,
                                       ByteOrder order, String usedBy) {
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
        if (entry.getSize() >= 0 && entry.getSize() < bytes) {
            throw truncated(file, record, usedBy, entry.getSize(), elements, type);
        }
        float[] out = new float[(int) elements];
        byte[] chunk = new byte[(int) Math.min(CHUNK_BYTES, Math.max(bytes, 8))];
        ByteBuffer buffer = ByteBuffer.wrap(chunk).order(order);
        try (InputStream in = zip.getInputStream(entry)) {
            long done = 0;
            int filled = 0;
            while (done < bytes) {
                int want = (int) Math.min(chunk.length, bytes - done);
                int n = in.readNBytes(chunk, 0, want);
                if (n < want) {
                    throw truncated(file, record, usedBy, done + n, elements, type);
                }
                buffer.clear().limit(want);
                int count = want / type.byteSize();
                type.decode(buffer, out, filled, count);
                filled += count;
                done += want;
            }
        } catch (IOException e) {
            throw new CheckpointException(file, "cannot read storage " + record + " (used by " + usedBy + "): "
                    + e.getMessage() + "; the file may be truncated or corrupt", e);
        }
        return out;
    }

    private static CheckpointException truncated(Path file, String record, String usedBy, long have, long elements,
                                                 ElementType type) {
        return new CheckpointException(file, "storage " + record + " (used by " + usedBy + ") holds " + have
                + " bytes but its " + elements + " " + type + " values need " + elements * type.byteSize()
                + "; the file is truncated or corrupt");
    }
}
