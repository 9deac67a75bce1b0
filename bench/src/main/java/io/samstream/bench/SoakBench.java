package io.samstream.bench;

import com.typesafe.config.ConfigFactory;
import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.stream.app.SamstreamRuntime;
import io.samstream.stream.app.VideoConnectors;
import io.samstream.stream.engine.StreamHandle;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Soak: the engine as {@code samstream run} builds it, on an embedded broker, for a while; streams are
 * added and removed over the streams topic every few seconds (live test patterns, at most {@code --max}
 * at once) and a prompt change goes to the prompts topic every second (add, update, remove, reset on a
 * running stream). Every {@code --sample} it writes heap used after a full GC, resident memory, live
 * threads and open file descriptors: over a long run they must stay flat (no leak per stream or
 * prompt). Loopback only; the run ends by itself.
 *
 * <pre>java -cp ... io.samstream.bench.SoakBench OUT.md [--minutes 30] [--every 3] [--max 4] [--sample 60]
 *      [--checkpoint CKPT] [--commit ID]</pre>
 */
public final class SoakBench {
    private SoakBench() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        double minutes = 30;
        int everySeconds = 3;
        int maxStreams = 4;
        int sampleSeconds = 60;
        String checkpoint = "gpu/src/test/resources/fixtures/tiny256/model.pth";
        String commit = "";
        for (int i = 1; i < args.length; i += 2) {
            switch (args[i]) {
                case "--minutes" -> minutes = Double.parseDouble(args[i + 1]);
                case "--every" -> everySeconds = Integer.parseInt(args[i + 1]);
                case "--max" -> maxStreams = Integer.parseInt(args[i + 1]);
                case "--sample" -> sampleSeconds = Integer.parseInt(args[i + 1]);
                case "--checkpoint" -> checkpoint = args[i + 1];
                case "--commit" -> commit = args[i + 1];
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        Path data = Files.createTempDirectory("samstream-soak-");
        List<String> rows = new ArrayList<>();
        long added = 0;
        long removed = 0;
        long prompts = 0;
        Instant started = Instant.now();
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().logDir(data.resolve("kafka")).start()) {
            SamstreamConfig config = ConfigLoader.validate(ConfigFactory.parseString("""
                    samstream {
                      model.checkpoint = "%s"
                      device = cpu
                      cpu.threads = 1
                      kafka.bootstrap-servers = "%s"
                      streams-topic = "samstream.streams"
                      http.enabled = off
                    }
                    """.formatted(Path.of(checkpoint).toAbsolutePath(), broker.bootstrapServers()))
                    .withFallback(ConfigFactory.defaultReference()).resolve(), "soak");
            try (SamstreamRuntime rt = SamstreamRuntime.start(config, VideoConnectors.sources(), c -> Optional.empty());
                 KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                         ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                         new StringSerializer(), new StringSerializer())) {
                Random random = new Random(1);
                long end = System.nanoTime() + (long) (minutes * 60e9);
                long nextChange = System.nanoTime();
                long nextSample = System.nanoTime();
                List<String> running = new ArrayList<>();
                int nextId = 0;
                while (System.nanoTime() < end) {
                    long now = System.nanoTime();
                    if (now >= nextSample) {
                        rows.add(sample(started, rt.engine().streams().size(), added, removed, prompts));
                        System.out.println(rows.get(rows.size() - 1));
                        nextSample += TimeUnit.SECONDS.toNanos(sampleSeconds);
                    }
                    if (now >= nextChange) {
                        if (running.size() < maxStreams && (running.isEmpty() || random.nextBoolean())) {
                            String id = "soak-" + nextId++;
                            producer.send(new ProducerRecord<>("samstream.streams", id,
                                    "{\"location\":\"testpattern:96x64@10?live=true&seed=" + nextId + "\","
                                            + "\"prompts\":{\"grid\":1}}")).get(30, TimeUnit.SECONDS);
                            running.add(id);
                            added++;
                        } else {
                            String id = running.remove(random.nextInt(running.size()));
                            producer.send(new ProducerRecord<>("samstream.streams", id, null)).get(30, TimeUnit.SECONDS);
                            removed++;
                        }
                        nextChange += TimeUnit.SECONDS.toNanos(everySeconds);
                    }
                    if (!running.isEmpty()) {
                        String stream = running.get(random.nextInt(running.size()));
                        String op = switch (random.nextInt(4)) {
                            case 0 -> "{\"stream\":\"%s\",\"op\":\"add\",\"object\":%d,\"points\":[[%d,%d,1]]}";
                            case 1 -> "{\"stream\":\"%s\",\"op\":\"update\",\"object\":%d,\"box\":[5,5,%d,%d]}";
                            case 2 -> "{\"stream\":\"%s\",\"op\":\"remove\",\"object\":%d%s}";
                            default -> "{\"stream\":\"%s\",\"op\":\"reset\"}";
                        };
                        int object = 1 + random.nextInt(5);
                        String json = op.startsWith("{\"stream\":\"%s\",\"op\":\"remove\"")
                                ? String.format(Locale.ROOT, op, stream, object, "")
                                : String.format(Locale.ROOT, op, stream, object, 20 + random.nextInt(60),
                                        20 + random.nextInt(40));
                        producer.send(new ProducerRecord<>(config.kafka().promptsTopic(), stream, json));
                        prompts++;
                    }
                    Thread.sleep(1000);
                }
                rows.add(sample(started, rt.engine().streams().size(), added, removed, prompts));
                long published = rt.engine().streams().stream().mapToLong(StreamHandle::published).sum();
                System.out.println("end: " + rt.engine().streams().size() + " streams running, " + published
                        + " frames published by them");
            }
        } finally {
            deleteRecursively(data);
        }
        write(out, rows, minutes, everySeconds, maxStreams, checkpoint, commit);
    }

    /** elapsed, streams, added, removed, prompts, heap MiB after GC, RSS MiB, threads, open fds. */
    private static String sample(Instant started, int streams, long added, long removed, long prompts)
            throws IOException {
        System.gc();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long rss = 0;
        for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.UTF_8)) {
            if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        long fds;
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            fds = s.count();
        }
        int threads = ManagementFactory.getThreadMXBean().getThreadCount();
        long seconds = Duration.between(started, Instant.now()).toSeconds();
        return String.format(Locale.ROOT, "| %d:%02d | %d | %d | %d | %d | %.0f | %.0f | %d | %d |", seconds / 60,
                seconds % 60, streams, added, removed, prompts, heap / 1048576.0, rss / 1048576.0, threads, fds);
    }

    private static void write(Path out, List<String> rows, double minutes, int every, int max, String checkpoint,
            String commit) throws IOException {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "# Soak: %.0f minutes, streams added and removed every %d s (at most %d"
                + " live test patterns 96x64@10), a prompt change every second%n%n", minutes, every, max));
        sb.append(String.format(Locale.ROOT, "`io.samstream.bench.SoakBench`, %s, commit %s, model %s, CPU (1 thread),"
                + " embedded broker. Heap is measured after a full GC.%n%n", Instant.now(),
                commit.isEmpty() ? "(not given)" : commit, checkpoint));
        sb.append("| elapsed | streams running | added | removed | prompt messages | heap MiB | RSS MiB | threads |"
                + " open fds |\n|---|---|---|---|---|---|---|---|---|\n");
        rows.forEach(r -> sb.append(r).append('\n'));
        Files.writeString(out, sb.toString());
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
