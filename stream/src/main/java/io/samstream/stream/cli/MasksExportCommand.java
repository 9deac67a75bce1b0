package io.samstream.stream.cli;

import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.kafka.MaskRecordDeserializer;
import io.samstream.stream.engine.LogSafe;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code samstream masks export --stream S --to DIR}: one stream's masks as the mask topic holds them now (from
 * its oldest record to its end at the start), as PNG files per object and frame ({@link MaskPngs}) or one COCO
 * JSON ({@link CocoMasks}, DIR/coco.json). A frame published twice (after a failover) is exported once, the
 * later record winning. COCO holds the frames in memory until written: {@code --max-frames} bounds them.
 */
@Command(
        name = "export",
        mixinStandardHelpOptions = true,
        description = {
            "Write one stream's masks from the mask topic to files: --format png (default) writes"
                    + " DIR/frame-000042-object-1.png per object and frame (255 inside the mask, 0 outside);"
                    + " --format coco writes DIR/coco.json (images, annotations with the COCO RLE, track_id = object id)."
        })
final class MasksExportCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions kafka;

    @Option(names = "--stream", required = true, paramLabel = "ID", description = "The stream to export.")
    String stream;

    @Option(names = "--to", required = true, paramLabel = "DIR", description = "The folder to write to (made when missing).")
    Path to;

    @Option(names = "--format", paramLabel = "png|coco", defaultValue = "png",
            description = "png: a PNG per object and frame; coco: one COCO JSON (default: ${DEFAULT-VALUE}).")
    String format;

    @Option(names = "--max-frames", paramLabel = "N", description = "At most the first N frames.")
    Integer maxFrames;

    @Override
    public Integer call() {
        boolean coco = switch (format.toLowerCase(Locale.ROOT)) {
            case "png" -> false;
            case "coco" -> true;
            default -> throw new ParameterException(spec.commandLine(), "--format must be png or coco, got '"
                    + LogSafe.of(format) + "'");
        };
        if (maxFrames != null && maxFrames < 1) {
            throw new ParameterException(spec.commandLine(), "--max-frames must be at least 1, got " + maxFrames);
        }
        KafkaClients clients = kafka.connect();
        String topic = kafka.config().kafka().masksTopic();
        PrintWriter err = spec.commandLine().getErr();
        MaskPngs.prepare(to);
        MaskRecordDeserializer records = new MaskRecordDeserializer();
        TreeMap<Long, MaskRecord> frames = new TreeMap<>();
        Set<Long> written = new HashSet<>();
        Set<String> others = new TreeSet<>();
        // The files written: a frame published twice (at least once, e.g. across a failover) replaces its PNGs.
        Set<Path> files = new HashSet<>();
        boolean exists = TopicReads.readToEnd(clients, topic, kafka.timeout(), r -> {
            if (r.value() == null || (r.key() != null && !r.key().equals(stream))) {
                if (r.key() != null && others.size() < 10) {
                    others.add(r.key());
                }
                return true;
            }
            MaskRecord record;
            try {
                record = records.deserialize(r.topic(), r.headers(), r.value());
            } catch (RuntimeException e) {
                err.println("samstream: skipped the record at " + r.topic() + "-" + r.partition() + "@" + r.offset()
                        + ": " + LogSafe.of(e.getMessage()));
                return true;
            }
            if (!record.stream().equals(stream)) {
                return true;
            }
            boolean newFrame = !written.contains(record.frame());
            if (newFrame && maxFrames != null && written.size() >= maxFrames) {
                return true; // past the limit: later records of frames already written still replace theirs
            }
            written.add(record.frame());
            if (coco) {
                frames.put(record.frame(), record);
            } else {
                MaskPngs.write(to, record);
                record.objects().forEach(o -> files.add(MaskPngs.file(to, record.frame(), o.id())));
            }
            return true;
        });
        if (written.isEmpty()) {
            throw new IllegalArgumentException("no mask records of stream '" + LogSafe.of(stream) + "' on topic "
                    + topic + (exists ? (others.isEmpty() ? " (it holds none)" : " (streams there: "
                    + String.join(", ", others) + (others.size() == 10 ? ", ..." : "") + ")") : " (it does not exist)"));
        }
        PrintWriter out = spec.commandLine().getOut();
        if (coco) {
            Path file = to.resolve("coco.json");
            var document = CocoMasks.document(stream, topic, frames.values());
            CocoMasks.write(file, document);
            out.printf("wrote %s: %d frames, %d masks of stream %s%n", file, frames.size(),
                    document.get("annotations").size(), stream);
        } else {
            out.printf("wrote %d masks of %d frames of stream %s to %s%n", files.size(), written.size(), stream, to);
        }
        out.flush();
        return 0;
    }
}
