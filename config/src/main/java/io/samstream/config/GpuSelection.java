package io.samstream.config;

import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which GPUs of the host the engine uses ({@code samstream.gpus}): every visible one, or the listed
 * ordinals (as {@code CUDA_VISIBLE_DEVICES} numbers them). The engine runs one encoder and decoder per GPU
 * and places each stream on one of them. Ignored by the CPU backend (there is one).
 *
 * @param all      every visible GPU
 * @param ordinals the chosen GPUs, in the order given, without duplicates (empty when {@code all})
 */
public record GpuSelection(boolean all, List<Integer> ordinals) {
    /** Every visible GPU (the default). */
    public static final GpuSelection ALL = new GpuSelection(true, List.of());

    public GpuSelection {
        ordinals = List.copyOf(ordinals);
        if (all != ordinals.isEmpty()) {
            throw new IllegalArgumentException(all ? "all GPUs take no ordinals" : "at least one GPU ordinal");
        }
    }

    /** The listed GPUs. */
    public static GpuSelection of(Integer... ordinals) {
        return new GpuSelection(false, List.of(ordinals));
    }

    /**
     * The ordinals this selection names on a host with {@code visible} GPUs.
     *
     * @throws ConfigException naming {@code samstream.gpus} when a listed GPU is not there
     */
    public List<Integer> resolve(int visible) {
        if (all) {
            List<Integer> every = new ArrayList<>(visible);
            for (int i = 0; i < visible; i++) {
                every.add(i);
            }
            return every;
        }
        for (int o : ordinals) {
            if (o >= visible) {
                throw new ConfigException(ConfigLoader.GPUS_KEY + ": GPU " + o + " does not exist (" + visible
                        + " visible" + (visible > 0 ? ": 0 to " + (visible - 1) : "")
                        + "; CUDA_VISIBLE_DEVICES renumbers them from 0)");
            }
        }
        return ordinals;
    }

    /** "all" or "[0, 1]", as the key is written. */
    public String describe() {
        return all ? "all" : ordinals.toString();
    }

    /** Parses {@code all} or comma-separated ordinals ({@code 0,1}; one ordinal alone too): command-line flags. */
    public static GpuSelection parse(String text, String where) {
        String t = text.trim();
        return t.matches("\\d{1,9}") ? of(Integer.parseInt(t))
                : parse(com.typesafe.config.ConfigValueFactory.fromAnyRef(t), where);
    }

    /**
     * Parses {@code all}, a list of ordinals ({@code [0, 1]}) or, for {@code -Dsamstream.gpus=0,1}, a
     * comma-separated string of them. Errors name {@code where}.
     */
    static GpuSelection parse(ConfigValue value, String where) {
        List<Object> items = new ArrayList<>();
        if (value.valueType() == ConfigValueType.LIST) {
            for (ConfigValue v : (com.typesafe.config.ConfigList) value) {
                items.add(v.unwrapped());
            }
        } else if (value.valueType() == ConfigValueType.STRING) {
            String s = ((String) value.unwrapped()).trim();
            if (s.toLowerCase(Locale.ROOT).equals("all")) {
                return ALL;
            }
            if (!s.contains(",")) {
                throw new ConfigException(where + ": '" + OneLine.of(s) + "' is neither all nor a list of GPU ordinals"
                        + " (e.g. [0, 1])");
            }
            for (String part : s.split(",", -1)) {
                items.add(part.trim());
            }
        } else {
            throw new ConfigException(where + ": " + OneLine.of(String.valueOf(value.unwrapped()))
                    + " is neither all nor a list of GPU ordinals (write [N] for GPU N alone)");
        }
        if (items.isEmpty()) {
            throw new ConfigException(where + ": the list is empty (all, or at least one GPU ordinal;"
                    + " samstream.device = cpu runs without a GPU)");
        }
        List<Integer> ordinals = new ArrayList<>(items.size());
        Set<Integer> seen = new HashSet<>();
        for (Object item : items) {
            int o = ordinal(item, where);
            if (!seen.add(o)) {
                throw new ConfigException(where + ": GPU " + o + " is listed twice");
            }
            ordinals.add(o);
        }
        return new GpuSelection(false, ordinals);
    }

    private static int ordinal(Object item, String where) {
        long v;
        if (item instanceof Integer || item instanceof Long) {
            v = ((Number) item).longValue();
        } else if (item instanceof String s && s.trim().matches("-?\\d{1,9}")) {
            v = Long.parseLong(s.trim());
        } else {
            throw new ConfigException(where + ": '" + OneLine.of(String.valueOf(item))
                    + "' is not a GPU ordinal (a whole number from 0)");
        }
        if (v < 0) {
            throw new ConfigException(where + ": GPU ordinal " + v + " is negative (ordinals count from 0)");
        }
        if (v > Integer.MAX_VALUE) {
            throw new ConfigException(where + ": GPU ordinal " + v + " is out of range");
        }
        return (int) v;
    }
}
