package io.samstream.stream.app;

import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.testkit.KafkaTopics;
import io.samstream.testkit.TestModels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.utils.Utils;

/** What the cluster tests share: a broker that lets groups notice a dead engine fast, configurations, definitions. */
final class ClusterKit {
    static final String STREAMS = "c-streams";
    static final String PROMPTS = "c-prompts";
    static final String MASKS = "c-masks";
    static final String STATE = "c-state";
    static final String BUNDLED = TestModels.demoSam().toString();

    /**
     * The test model (tiny, random weights) is fast on a CPU but its masks are poor: tracks kept however
     * poor, so that the ids a test follows are the tracker's and not its losses'.
     */
    static final String KEEP_TRACKS = "tracking { min-predicted-iou = 0, min-stability = 0, lost-after = 10000,"
            + " hidden-lost-after = 10000, merge-iou = 1.0 }";

    private ClusterKit() {}

    /** The cluster tests' broker settings: groups accept session timeouts from 1 s. */
    static EmbeddedKafkaBroker.Builder fastGroups(EmbeddedKafkaBroker.Builder broker) {
        return broker.brokerProperty("group.min.session.timeout.ms", "1000");
    }

    /** A broker of {@link #fastGroups} (for a test that starts several in turn; one a test: KafkaBrokerExtension). */
    static EmbeddedKafkaBroker broker() {
        return fastGroups(EmbeddedKafkaBroker.builder()).start();
    }

    /** An engine configuration: cluster on, {@code partitions}, CPU, the given model, Kafka at {@code bootstrap}. */
    static Path config(Path dir, String instance, String bootstrap, String model, int partitions, int stateEvery,
            String sessionTimeout, String extra) throws Exception {
        return Files.writeString(dir.resolve(instance + ".conf"), """
                samstream {
                  model.checkpoint = "%s"
                  device = cpu
                  cpu.threads = 1
                  streams-topic = "%s"
                  kafka { bootstrap-servers = "%s", masks-topic = "%s", prompts-topic = "%s" }
                  cluster {
                    enabled = on
                    group = "engines"
                    instance-id = "%s"
                    partitions = %d
                    state-topic = "%s"
                    state-every-frames = %d
                    session-timeout = %s
                  }
                  http.enabled = off
                  %s
                }
                """.formatted(model, STREAMS, bootstrap, MASKS, PROMPTS, instance, partitions, STATE, stateEvery,
                sessionTimeout, extra));
    }

    /** The masks topic (one partition) and the streams topic (compacted, {@code partitions}), as the engines make them. */
    static void topics(EmbeddedKafkaBroker broker, int partitions) {
        broker.createTopic(MASKS, 1, false);
        // As the engines would create it: co-partitioned with the prompts and state topics.
        broker.createTopic(STREAMS, partitions, true);
    }

    /** Defines the file streams {@code ids}: the i-th plays {@link #clip}({@code frames}, i). */
    static void defineFiles(KafkaProducer<String, byte[]> p, List<String> ids, int frames) throws Exception {
        for (int i = 0; i < ids.size(); i++) {
            KafkaTopics.send(p, STREAMS, ids.get(i), clip(frames, i));
        }
    }

    static final int WIDTH = 128;
    static final int HEIGHT = 96;

    /**
     * A generated clip of {@code frames} frames (read like a file), its shapes prompted with their boxes
     * in frame 0 (the generator's ground truth), ids 1, 2, ...
     */
    static String clip(int frames, long seed) {
        StringBuilder objects = new StringBuilder();
        List<TestPatternSource.PatternObject> shapes = new TestPatternSource("x", WIDTH, HEIGHT, 25, 1, seed, false)
                .objectsAt(0);
        for (int i = 0; i < shapes.size(); i++) {
            int[] b = shapes.get(i).box();
            objects.append(i == 0 ? "" : ",").append("{\"id\":").append(i + 1).append(",\"box\":[")
                    .append(Math.max(0, b[0])).append(',').append(Math.max(0, b[1])).append(',')
                    .append(Math.min(WIDTH, b[2])).append(',').append(Math.min(HEIGHT, b[3])).append("]}");
        }
        return "{\"location\":\"testpattern:" + WIDTH + "x" + HEIGHT + "@25?frames=" + frames + "&seed=" + seed
                + "\",\"prompts\":{\"objects\":[" + objects + "]}}";
    }

    /**
     * {@code n} stream ids {@code prefix-k}, the i-th one's key in partition {@code i % partitions} (Kafka's
     * default partitioner), so that streams spread over every engine of a group.
     */
    static List<String> spreadIds(String prefix, int n, int partitions) {
        List<String> out = new ArrayList<>();
        for (int k = 0; out.size() < n; k++) {
            String id = prefix + "-" + k;
            byte[] key = id.getBytes(StandardCharsets.UTF_8);
            if (Utils.toPositive(Utils.murmur2(key)) % partitions == out.size() % partitions) {
                out.add(id);
            }
        }
        return out;
    }

    /** Records per stream, by frame (repeats kept, in the order read). */
    static Map<String, TreeMap<Long, List<MaskRecord>>> byStreamAndFrame(List<MaskRecord> records) {
        Map<String, TreeMap<Long, List<MaskRecord>>> out = new HashMap<>();
        for (MaskRecord r : records) {
            out.computeIfAbsent(r.stream(), s -> new TreeMap<>()).computeIfAbsent(r.frame(), f -> new ArrayList<>())
                    .add(r);
        }
        return out;
    }

    /**
     * The longest two engines may both publish one stream: one rebalance. Cooperative-sticky revokes a partition
     * (its old owner stops the streams and publishes what they decoded) before the new owner gets it, so a handover
     * between live engines overlaps by ~0; a killed engine publishes nothing after its death. What remains is an
     * engine put out of the group while it still runs (it missed the session timeout, say in a long pause on a
     * loaded machine): it publishes until its next poll finds its partitions lost, at most the session timeout after
     * the group gave them away, plus the rebalance's own time, for which the issue allows 10 s.
     */
    static long oneRebalanceMs(int sessionTimeoutS) {
        return (sessionTimeoutS + 10) * 1000L;
    }

    /**
     * A stream reaching engine {@code to} (after {@code from}, the engine that published it before): {@code overlapMs}
     * is how long {@code to} and an earlier engine of the stream both published it; negative when the earlier ones
     * had all stopped first: minus the gap between their last record and {@code to}'s first; {@code atNanos} when
     * {@code to}'s first record of it was read.
     */
    record Handover(String stream, String from, String to, long atNanos, long overlapMs) {}

    /** One engine publishing one stream without a pause longer than a session timeout ({@link #handovers}). */
    private record Hold(String engine, long from, long to) {}

    /**
     * The handovers of each stream in {@code seen} (records with an engine header), in the order read. An engine
     * holds a stream from a record of it to the last one before a pause longer than {@code sessionTimeoutS} (as the
     * tap read them): a stream comes back to an engine it left (a survivor of a kill may get its own stream back)
     * only after another engine held it and the group noticed that one gone, at least a session timeout, so a
     * return starts a new hold; a pause of an engine that publishes on afterwards, while another one holds the
     * stream, is an overlap all the same (its next hold meets the other's). Two engines overlap where their holds do.
     */
    static List<Handover> handovers(List<MaskTap.Seen> seen, int sessionTimeoutS) {
        long pause = sessionTimeoutS * 1_000_000_000L;
        Map<String, List<Hold>> holds = new LinkedHashMap<>();
        Map<String, Integer> open = new HashMap<>(); // "stream engine" -> index of its last hold in holds
        for (MaskTap.Seen s : seen) {
            if (s.engine().isEmpty()) {
                continue;
            }
            List<Hold> ofStream = holds.computeIfAbsent(s.record().stream(), k -> new ArrayList<>());
            Integer last = open.get(s.record().stream() + " " + s.engine());
            if (last != null && s.atNanos() - ofStream.get(last).to() <= pause) {
                ofStream.set(last, new Hold(s.engine(), ofStream.get(last).from(), s.atNanos()));
            } else {
                open.put(s.record().stream() + " " + s.engine(), ofStream.size());
                ofStream.add(new Hold(s.engine(), s.atNanos(), s.atNanos()));
            }
        }
        List<Handover> out = new ArrayList<>();
        holds.forEach((stream, ofStream) -> {
            // In the order they began (the tap's order, so already).
            for (int j = 1; j < ofStream.size(); j++) {
                Hold to = ofStream.get(j);
                boolean another = false;
                long overlap = Long.MIN_VALUE;
                for (int i = 0; i < j; i++) {
                    Hold h = ofStream.get(i);
                    if (!h.engine().equals(to.engine())) {
                        another = true;
                        overlap = Math.max(overlap, Math.min(h.to(), to.to()) - Math.max(h.from(), to.from()));
                    }
                }
                if (another && !ofStream.get(j - 1).engine().equals(to.engine())) {
                    out.add(new Handover(stream, ofStream.get(j - 1).engine(), to.engine(), to.from(),
                            overlap / 1_000_000));
                }
            }
        });
        out.sort(Comparator.comparingLong(Handover::atNanos));
        return out;
    }

    /** The largest overlap of each stream that changed engines, by stream id. */
    static Map<String, Long> maxOverlapByStream(List<Handover> handovers) {
        Map<String, Long> out = new TreeMap<>();
        handovers.forEach(h -> out.merge(h.stream(), Math.max(0, h.overlapMs()), Math::max));
        return out;
    }

    /** The handovers, one a line (overlap or gap), then the largest overlap per stream (0 for a gap). */
    static String describe(List<Handover> handovers) {
        StringBuilder b = new StringBuilder();
        for (Handover h : handovers) {
            b.append(String.format("  %s %s -> %s: %s%n", h.stream(), h.from(), h.to(), h.overlapMs() >= 0
                    ? "overlap " + h.overlapMs() + " ms" : "no overlap, a gap of " + -h.overlapMs() + " ms"));
        }
        return b.append("  max overlap per stream (ms): ").append(maxOverlapByStream(handovers)).toString();
    }
}
