package io.samstream.stream.cli;

import io.samstream.config.ConfigException;
import io.samstream.config.StreamSpec;
import io.samstream.config.StreamSpecs;
import io.samstream.connectors.video.FrameSources;
import io.samstream.stream.engine.LogSafe;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code samstream streams list}: one line per stream defined on the streams topic, its location with the
 * password of a URL masked. A definition the engine would skip is listed with the engine's reason.
 */
@Command(
        name = "list",
        mixinStandardHelpOptions = true,
        description = "List the streams defined on the streams topic: id, live or file, decoder, prompts, location"
                + " (passwords in URLs shown as ***).")
final class StreamsListCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions kafka;

    @Mixin
    StreamsTopicOption streamsTopic;

    @Override
    public Integer call() {
        String topic = streamsTopic.resolve(kafka);
        StreamDefinitions defs = StreamDefinitions.read(kafka.connect(), topic, kafka.timeout());
        PrintWriter out = spec.commandLine().getOut();
        if (defs.byId.isEmpty()) {
            out.println("no streams defined on topic " + topic + (defs.exists ? "" : " (the topic does not exist yet)"));
            out.flush();
            return 0;
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"ID", "LIVE", "DECODER", "PROMPTS", "LOCATION"});
        for (Map.Entry<String, String> e : defs.byId.entrySet()) {
            rows.add(row(e.getKey(), e.getValue()));
        }
        print(out, rows);
        out.flush();
        return 0;
    }

    private String[] row(String id, String json) {
        try {
            StreamSpec s = StreamSpecs.fromJson(id, json, kafka.config().streamDefaults());
            return new String[] {s.id(), s.isLive() ? "live" : "file", s.decoder().name().toLowerCase(Locale.ROOT),
                prompts(s), FrameSources.redacted(s.location())};
        } catch (ConfigException e) {
            // What the engine logs when it skips it; the location is not shown: it could not be read.
            return new String[] {LogSafe.of(id), "-", "-", "-", "invalid, engines skip it: " + LogSafe.of(e.getMessage())};
        }
    }

    private static String prompts(StreamSpec s) {
        List<String> parts = new ArrayList<>();
        int objects = s.prompts().objects().size();
        if (objects > 0) {
            parts.add(objects + (objects == 1 ? " object" : " objects"));
        }
        if (s.prompts().grid() > 0) {
            parts.add("grid " + s.prompts().grid() + "x" + s.prompts().grid());
        }
        int concepts = s.prompts().concepts().size();
        if (concepts > 0) {
            int every = s.prompts().conceptsEveryFrames();
            parts.add(concepts + (concepts == 1 ? " concept" : " concepts") + (every > 0 ? " every " + every : ""));
        }
        return parts.isEmpty() ? "none" : String.join(", ", parts);
    }

    /** Columns padded to their widest cell; the last one (the location) as it is. */
    private static void print(PrintWriter out, List<String[]> rows) {
        int[] width = new int[rows.get(0).length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length - 1; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < r.length - 1; i++) {
                b.append(r[i]).append(" ".repeat(width[i] - r[i].length() + 2));
            }
            out.println(b.append(r[r.length - 1]));
        }
    }
}
