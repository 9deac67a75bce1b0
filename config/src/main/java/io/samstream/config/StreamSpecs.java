package io.samstream.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigList;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigSyntax;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Stream definitions, from {@code samstream.streams} entries or from JSON values of the stream-definitions
 * topic (same keys). Errors are {@link ConfigException}s that name the stream and the key.
 */
public final class StreamSpecs {
    private static final Set<String> STREAM_KEYS = Set.of("id", "location", "live", "decoder", "prompts");
    private static final Set<String> PROMPT_KEYS = Set.of("objects", "grid", "concepts",
            "concepts-every-frames");
    private static final Set<String> OBJECT_KEYS = Set.of("id", "points", "box");

    private StreamSpecs() {}

    /**
     * A stream definition from the topic: key = stream id, value = JSON
     * {@code {"location", "live"?, "decoder"?, "prompts"?, "id"?}} ({@code id}, when given, must equal the key).
     */
    public static StreamSpec fromJson(String key, String json, StreamDefaults defaults) {
        String where = "stream definition '" + key + "'";
        Config c;
        try {
            c = ConfigFactory.parseString(json, ConfigParseOptions.defaults().setSyntax(ConfigSyntax.JSON));
        } catch (com.typesafe.config.ConfigException e) {
            throw new ConfigException(where + ": not a JSON object: " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            // Typesafe Config's tokenizer passes a unicode escape with a sign (backslash, u, -cde) to Character.toChars.
            throw new ConfigException(where + ": not a JSON object: a bad escape (" + e.getMessage() + ")", e);
        }
        if (c.hasPath("id") && !key.equals(string(c, "id", where))) {
            throw new ConfigException(where + ": id '" + c.getString("id") + "' differs from the record key");
        }
        return parse(c, where, defaults, Optional.of(key));
    }

    /** One entry of {@code samstream.streams}, {@code where} naming it for errors. */
    static StreamSpec parse(Config c, String entry, StreamDefaults defaults, Optional<String> id) {
        unknownKeys(c, STREAM_KEYS, entry);
        String streamId = id.isPresent() ? id.get() : required(c, "id", entry);
        String where = id.isPresent() ? entry : entry + " (" + streamId + ")";
        String location = required(c, "location", where);
        StreamSpec.Live live = c.hasPath("live")
                ? StreamSpec.Live.parse(scalar(c, "live", where), where + ".live") : defaults.live();
        StreamSpec.Decoder decoder = c.hasPath("decoder")
                ? StreamSpec.Decoder.parse(string(c, "decoder", where), where + ".decoder") : defaults.decoder();
        PromptSpec prompts = c.hasPath("prompts") ? prompts(object(c, "prompts", where), where + ".prompts")
                : defaults.prompts();
        try {
            return new StreamSpec(streamId, location, live, decoder, prompts);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(where + ": " + e.getMessage(), e);
        }
    }

    /**
     * A prompts section: {@code objects = [{id, points = [[x, y, label?], ...], box = [x0, y0, x1, y1]}], grid = N,
     * concepts = ["person", ...], concepts-every-frames = N}.
     */
    static PromptSpec prompts(Config c, String where) {
        unknownKeys(c, PROMPT_KEYS, where);
        int grid = c.hasPath("grid") ? integer(c, "grid", where) : 0;
        List<PromptSpec.ObjectPrompt> objects = new ArrayList<>();
        if (c.hasPath("objects")) {
            ConfigValue v = c.getValue("objects");
            if (v.valueType() != ConfigValueType.LIST) {
                throw new ConfigException(where + ".objects: expected a list of objects, got " + v.valueType());
            }
            ConfigList list = (ConfigList) v;
            for (int i = 0; i < list.size(); i++) {
                String w = where + ".objects[" + i + "]";
                if (list.get(i).valueType() != ConfigValueType.OBJECT) {
                    throw new ConfigException(w + ": expected an object {id, points, box}");
                }
                objects.add(object(((com.typesafe.config.ConfigObject) list.get(i)).toConfig(), w));
            }
        }
        List<String> concepts = new ArrayList<>();
        if (c.hasPath("concepts")) {
            List<?> raw = list(c, "concepts", where);
            for (int i = 0; i < raw.size(); i++) {
                if (!(raw.get(i) instanceof String phrase)) {
                    throw new ConfigException(where + ".concepts[" + i + "]: expected a noun phrase (a string), got "
                            + raw.get(i));
                }
                concepts.add(phrase);
            }
        }
        int every = 0;
        if (c.hasPath("concepts-every-frames")) {
            every = integer(c, "concepts-every-frames", where);
            if (every < 1 || every > EngineSettings.Tracking.MAX_CONCEPTS_EVERY_FRAMES) {
                throw new ConfigException(where + ".concepts-every-frames: must be 1 to "
                        + EngineSettings.Tracking.MAX_CONCEPTS_EVERY_FRAMES + " (the detector runs on every n-th"
                        + " frame), got " + every);
            }
        }
        try {
            return new PromptSpec(objects, grid, concepts, every);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(where + ": " + e.getMessage(), e);
        }
    }

    private static PromptSpec.ObjectPrompt object(Config c, String where) {
        unknownKeys(c, OBJECT_KEYS, where);
        if (!c.hasPath("id")) {
            throw new ConfigException(where + ".id is missing");
        }
        int id = integer(c, "id", where);
        double[][] points = null;
        if (c.hasPath("points")) {
            List<?> raw = list(c, "points", where);
            points = new double[raw.size()][];
            for (int i = 0; i < raw.size(); i++) {
                points[i] = numbers(raw.get(i), where + ".points[" + i + "]");
            }
        }
        double[] box = c.hasPath("box") ? numbers(list(c, "box", where), where + ".box") : null;
        try {
            return new PromptSpec.ObjectPrompt(id, points, box);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(where + ": " + e.getMessage(), e);
        }
    }

    private static double[] numbers(Object value, String where) {
        if (!(value instanceof List<?> l)) {
            throw new ConfigException(where + ": expected a list of numbers");
        }
        double[] out = new double[l.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(l.get(i) instanceof Number n) || !Double.isFinite(n.doubleValue())) {
                throw new ConfigException(where + ": expected numbers, got " + l);
            }
            out[i] = n.doubleValue();
        }
        return out;
    }

    private static List<?> list(Config c, String key, String where) {
        ConfigValue v = c.getValue(key);
        if (v.valueType() != ConfigValueType.LIST) {
            throw new ConfigException(where + "." + key + ": expected a list, got " + v.valueType());
        }
        return (List<?>) v.unwrapped();
    }

    private static Config object(Config c, String key, String where) {
        ConfigValue v = c.getValue(key);
        if (v.valueType() != ConfigValueType.OBJECT) {
            throw new ConfigException(where + "." + key + ": expected an object, got " + v.valueType());
        }
        return c.getConfig(key);
    }

    private static String required(Config c, String key, String where) {
        if (!c.hasPath(key)) {
            throw new ConfigException(where + "." + key + " is missing");
        }
        return string(c, key, where);
    }

    private static String string(Config c, String key, String where) {
        ConfigValue v = c.getValue(key);
        if (v.valueType() != ConfigValueType.STRING) {
            throw new ConfigException(where + "." + key + ": expected a string, got " + v.valueType());
        }
        return c.getString(key).trim();
    }

    /** Booleans and strings both read as text ({@code live = true} and {@code live = "auto"}). */
    private static String scalar(Config c, String key, String where) {
        ConfigValue v = c.getValue(key);
        if (v.valueType() != ConfigValueType.STRING && v.valueType() != ConfigValueType.BOOLEAN) {
            throw new ConfigException(where + "." + key + ": expected auto, true or false, got " + v.valueType());
        }
        return String.valueOf(v.unwrapped());
    }

    private static int integer(Config c, String key, String where) {
        try {
            return c.getInt(key);
        } catch (com.typesafe.config.ConfigException e) {
            throw new ConfigException(where + "." + key + ": expected a whole number", e);
        }
    }

    private static void unknownKeys(Config c, Set<String> known, String where) {
        for (String k : c.root().keySet()) {
            if (!known.contains(k)) {
                throw new ConfigException(where + ": unknown key '" + k + "' (expected one of " + known + ")");
            }
        }
    }
}
