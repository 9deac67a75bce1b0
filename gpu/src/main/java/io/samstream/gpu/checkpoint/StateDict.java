package io.samstream.gpu.checkpoint;

import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Named fp32 tensors read from a checkpoint, under Meta's segment-anything key names
 * (e.g. {@code image_encoder.blocks.0.attn.qkv.weight}) whatever naming the file used.
 *
 * <p>Lookups that fail throw {@link CheckpointException} naming the file, the key and the shapes, so a
 * wrong or mismatched checkpoint is reported as such instead of failing deep inside the model.
 */
public final class StateDict {
    private final Path source;
    private final Map<String, Tensor> tensors;

    public StateDict(Path source, Map<String, Tensor> tensors) {
        this.source = source;
        this.tensors = Collections.unmodifiableMap(new LinkedHashMap<>(tensors));
    }

    public Path source() {
        return source;
    }

    public Set<String> keys() {
        return tensors.keySet();
    }

    public boolean contains(String key) {
        return tensors.containsKey(key);
    }

    public int size() {
        return tensors.size();
    }

    /** The tensor under {@code key}; a clear error when the checkpoint lacks it. */
    public Tensor get(String key) {
        Tensor t = tensors.get(key);
        if (t == null) {
            throw new CheckpointException(source, "missing key " + key + hint(key));
        }
        return t;
    }

    /** The tensor under {@code key}, which must have exactly this shape. */
    public Tensor get(String key, int... expectedShape) {
        Tensor t = get(key);
        if (!t.hasShape(expectedShape)) {
            throw new CheckpointException(source, "tensor " + key + " has shape " + t.shapeString()
                    + " where " + Arrays.toString(expectedShape) + " was expected");
        }
        return t;
    }

    /** Counts keys {@code prefix + i + "."...} for i = 0, 1, ... until the first gap. */
    public int countIndexed(String prefix) {
        int n = 0;
        while (hasPrefix(prefix + n + ".")) {
            n++;
        }
        return n;
    }

    public boolean hasPrefix(String prefix) {
        for (String k : tensors.keySet()) {
            if (k.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    private String hint(String key) {
        int dot = key.indexOf('.');
        String module = dot < 0 ? key : key.substring(0, dot + 1);
        boolean any = hasPrefix(module);
        if (tensors.isEmpty()) {
            return " (the checkpoint holds no tensors)";
        }
        if (!any) {
            Set<String> tops = new TreeSet<>();
            for (String k : tensors.keySet()) {
                int d = k.indexOf('.');
                tops.add(d < 0 ? k : k.substring(0, d));
                if (tops.size() > 6) {
                    break;
                }
            }
            return " (no " + module + "* keys at all; top-level names found: " + tops
                    + " - is this a Segment Anything checkpoint?)";
        }
        return "";
    }
}
