package io.samstream.gpu.checkpoint;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the tensor dictionary in an unpickled checkpoint: the top-level dict itself (what
 * {@code torch.save(model.state_dict(), f)} writes), or a dict under {@code "model"} or
 * {@code "state_dict"} (what training scripts write next to epochs and optimizer state).
 */
final class StateDictLocator {
    private static final Logger log = LoggerFactory.getLogger(StateDictLocator.class);

    /** Keys under which training checkpoints commonly nest the model's state_dict. */
    private static final List<String> WRAPPER_KEYS = List.of("model", "state_dict");

    private StateDictLocator() {}

    static Map<String, TensorRef> locate(Path file, Object root) {
        if (!(root instanceof Map<?, ?> top)) {
            throw new CheckpointException(file, "holds " + RestrictedUnpickler.describe(root)
                    + " instead of a dict of tensors (a state_dict)");
        }
        if (holdsTensors(top)) {
            return tensors(top);
        }
        List<String> found = new ArrayList<>();
        Map<?, ?> chosen = null;
        for (String key : WRAPPER_KEYS) {
            if (top.get(key) instanceof Map<?, ?> inner && holdsTensors(inner)) {
                found.add(key);
                chosen = inner;
            }
        }
        if (found.size() == 1) {
            log.debug("{}: using the state_dict under '{}'", file, found.get(0));
            return tensors(chosen);
        }
        if (found.size() > 1) {
            throw new CheckpointException(file, "holds tensor dicts under both " + found
                    + "; cannot tell which one is the model's state_dict");
        }
        throw new CheckpointException(file, "holds no tensors: a state_dict was expected at the top level or under "
                + WRAPPER_KEYS + ", but the top-level keys are " + keysOf(top));
    }

    private static boolean holdsTensors(Map<?, ?> map) {
        for (Object v : map.values()) {
            if (v instanceof TensorRef) {
                return true;
            }
        }
        return false;
    }

    private static Map<String, TensorRef> tensors(Map<?, ?> map) {
        Map<String, TensorRef> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
            if (e.getKey() instanceof String key && e.getValue() instanceof TensorRef t) {
                out.put(key, t);
            } else {
                log.debug("skipping non-tensor entry {} ({})", e.getKey(), RestrictedUnpickler.describe(e.getValue()));
            }
        }
        return out;
    }

    private static String keysOf(Map<?, ?> map) {
        List<String> keys = new ArrayList<>();
        for (Object k : map.keySet()) {
            if (keys.size() == 10) {
                keys.add("...");
                break;
            }
            keys.add(String.valueOf(k));
        }
        return keys.toString();
    }
}
