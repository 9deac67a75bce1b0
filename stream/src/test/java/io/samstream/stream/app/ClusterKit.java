package io.samstream.stream.app;

import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.video.TestPatternSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;

/** What the cluster tests share: a broker that lets groups notice a dead engine fast, configurations, definitions. */
final class ClusterKit {
    static final String STREAMS = "c-streams";
    static final String PROMPTS = "c-prompts";
    static final String MASKS = "c-masks";
    static final String STATE = "c-state";
    static final String BUNDLED = Path.of("../examples/sam-demo-synthetic.pth").toAbsolutePath().toString();

    /**
     * The test model (tiny, random weights) is fast on a CPU but its masks are poor: tracks kept however
     * poor, so that the ids a test follows are the tracker's and not its losses'.
     */
    static final String KEEP_TRACKS = "tracking { min-predicted-iou = 0, min-stability = 0, lost-after = 10000,"
            + " hidden-lost-after = 10000, merge-iou = 1.0 }";

    private ClusterKit() {}

    /** A broker whose groups accept session timeouts from 1 s. */
    static EmbeddedKafkaBroker broker() {
        return EmbeddedKafkaBroker.builder().brokerProperty("group.min.session.timeout.ms", "1000").start();
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
                  metrics.enabled = off
                  %s
                }
                """.formatted(model, STREAMS, bootstrap, MASKS, PROMPTS, instance, partitions, STATE, stateEvery,
                sessionTimeout, extra));
    }

    static KafkaProducer<String, byte[]> producer(String bootstrap) {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                new StringSerializer(), new ByteArraySerializer());
    }

    static void send(KafkaProducer<String, byte[]> p, String topic, String key, String json) throws Exception {
        p.send(new ProducerRecord<>(topic, key, json == null ? null : json.getBytes(StandardCharsets.UTF_8)))
                .get(30, TimeUnit.SECONDS);
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
}
