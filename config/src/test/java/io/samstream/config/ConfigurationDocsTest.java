package io.samstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigRenderOptions;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md cannot drift from reference.conf: every leaf key of reference.conf has a row there with
 * the same default, and every row names a key that exists.
 */
class ConfigurationDocsTest {
    /** A row of the reference's tables: {@code | `samstream.key` | `default` | bounds | what |}. */
    private static final Pattern ROW = Pattern.compile("(?m)^\\|\\s*`(samstream\\.[^`]+)`\\s*\\|([^|]*)\\|");
    private static final Pattern CODE = Pattern.compile("\\s*`([^`]*)`\\s*");

    @Test
    void everyKeyOfReferenceConfIsDocumentedWithItsDefault() {
        Path root = RepoDocs.root();
        Config reference = ConfigFactory.parseFile(
                root.resolve("config/src/main/resources/reference.conf").toFile(),
                ConfigParseOptions.defaults().setAllowMissing(false)).resolve();
        Map<String, String> keys = leaves(reference);
        assertTrue(keys.size() >= 50, "only " + keys.size() + " keys found in reference.conf: " + keys.keySet());
        List<String> problems = problems(keys, RepoDocs.read(root.resolve("docs/configuration.md")));
        assertTrue(problems.isEmpty(), "docs/configuration.md and reference.conf disagree (each key of reference.conf"
                + " needs a row | `key` | `default` | bounds | what |):\n" + String.join("\n", problems));
    }

    /**
     * Every leaf path of {@code config} with its default as the docs write it: a string as it is ({@code ""} when
     * empty), a number or boolean as written, a list or an object in concise JSON. An empty object ({@code
     * producer {}}) is a leaf: a key users fill.
     */
    static Map<String, String> leaves(Config config) {
        Map<String, String> out = new TreeMap<>();
        collect(config.root(), new ArrayList<>(), out);
        return out;
    }

    private static void collect(ConfigObject object, List<String> path, Map<String, String> out) {
        for (Map.Entry<String, ConfigValue> e : object.entrySet()) {
            List<String> p = new ArrayList<>(path);
            p.add(e.getKey());
            ConfigValue v = e.getValue();
            if (v.valueType() == ConfigValueType.OBJECT && !((ConfigObject) v).isEmpty()) {
                collect((ConfigObject) v, p, out);
            } else {
                out.put(ConfigUtil.joinPath(p), rendered(v));
            }
        }
    }

    private static String rendered(ConfigValue v) {
        if (v.valueType() == ConfigValueType.STRING) {
            String s = (String) v.unwrapped();
            return s.isEmpty() ? "\"\"" : s;
        }
        return v.render(ConfigRenderOptions.concise());
    }

    /** What is wrong between the keys (path to default) and the reference page, one line each. */
    static List<String> problems(Map<String, String> keys, String markdown) {
        List<String> problems = new ArrayList<>();
        Map<String, String> documented = new LinkedHashMap<>();
        Matcher m = ROW.matcher(markdown);
        while (m.find()) {
            String key = m.group(1);
            Matcher code = CODE.matcher(m.group(2));
            if (!code.matches()) {
                problems.add(key + ": its default cell '" + m.group(2).trim() + "' is not one `code` span");
                continue;
            }
            if (documented.put(key, code.group(1)) != null) {
                problems.add(key + ": documented twice");
            }
        }
        keys.forEach((key, def) -> {
            String doc = documented.get(key);
            if (doc == null) {
                problems.add(key + ": in reference.conf (default " + def + ") but not documented");
            } else if (!doc.equals(def)) {
                problems.add(key + ": documented default `" + doc + "` but reference.conf says `" + def + "`");
            }
        });
        documented.keySet().stream().filter(k -> !keys.containsKey(k))
                .forEach(k -> problems.add(k + ": documented but no longer in reference.conf"));
        return problems;
    }

    // The check itself, on a reference made here.

    @Test
    void missingStaleDuplicatedAndWrongDefaultsAreEachNamed() {
        Map<String, String> keys = leaves(ConfigFactory.parseString(
                "samstream { a = 1, b = \"\", c { d = on, e = 20ms }, f = [], g {} }"));
        assertEquals(Map.of("samstream.a", "1", "samstream.b", "\"\"", "samstream.c.d", "on", "samstream.c.e", "20ms",
                "samstream.f", "[]", "samstream.g", "{}"), keys);
        String page = String.join("\n",
                "| key | default | bounds | what |",
                "|---|---|---|---|",
                "| `samstream.a` | `2` | any | wrong default |",
                "| `samstream.b` | `\"\"` | a path | fine |",
                "| `samstream.c.d` | on | boolean | not a code span |",
                "| `samstream.f` | `[]` | a list | fine |",
                "| `samstream.f` | `[]` | a list | twice |",
                "| `samstream.g` | `{}` | properties | fine |",
                "| `samstream.gone` | `x` | - | stale |");
        assertEquals(List.of(
                "samstream.c.d: its default cell 'on' is not one `code` span",
                "samstream.f: documented twice",
                "samstream.a: documented default `2` but reference.conf says `1`",
                "samstream.c.d: in reference.conf (default on) but not documented",
                "samstream.c.e: in reference.conf (default 20ms) but not documented",
                "samstream.gone: documented but no longer in reference.conf"), problems(keys, page));
    }
}
