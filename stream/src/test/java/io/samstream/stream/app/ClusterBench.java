package io.samstream.stream.app;

import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.testkit.Fixtures;
import io.samstream.testkit.KafkaTopics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The cluster's figures on this machine's CPU, engines in JVMs of their own (as {@link ClusterFailoverTest}):
 * throughput with 1, 2 and 3 engines, and over {@code kills} rounds of 3 engines, one killed with SIGKILL,
 * the time until its streams' records flow again elsewhere (p50 / max) and the frames processed twice; with
 * {@code join} among the parts, a fourth engine then joins (the time until its first record, the streams it took).
 * Every round reports the largest overlap of a handover ({@link ClusterKit#handovers}: how long two engines both
 * published one stream). A benchmark, not a test: it asserts nothing and runs only when asked.
 *
 * <pre>mvn -B -o -pl stream -am test -Dtest=ClusterBench -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dsamstream.bench.cluster=true [-Dsamstream.bench.kills=10] [-Dsamstream.bench.parts=throughput,failover,join]
 *     [-Dsamstream.bench.out=../bench/results/X.md]</pre>
 * The table is rewritten after each measurement, so an interrupted run keeps what it measured.
 */
@EnabledIfSystemProperty(named = "samstream.bench.cluster", matches = "true")
class ClusterBench {
    private static final int PARTITIONS = 6;
    private static final int SESSION_S = 6;
    private static final List<String> FILES = ClusterKit.spreadIds("f", PARTITIONS, PARTITIONS);

    @Test
    void figures() throws Exception {
        int kills = Integer.getInteger("samstream.bench.kills", 10);
        int frames = Integer.getInteger("samstream.bench.frames", 60);
        Path out = Path.of(System.getProperty("samstream.bench.out",
                Fixtures.root().resolve("bench/results/" + LocalDate.now() + "-cpu-cluster.md").toString()));
        Path dir = Files.createDirectories(Path.of("target", "cluster-bench").toAbsolutePath());
        StringBuilder md = new StringBuilder();
        md.append("# Cluster on CPU: throughput with 1-3 engines, failover (").append(LocalDate.now()).append(")\n\n")
                .append("Engines in JVMs of their own on this machine (").append(Runtime.getRuntime().availableProcessors())
                .append(" cores shared by all of them and the broker), `cpu.threads = 1` each, the test model ")
                .append("(tiny256), ").append(FILES.size()).append(" generated clips of 128x96 read as files, ")
                .append(PARTITIONS).append(" partitions, session timeout ").append(SESSION_S)
                .append(" s, state every 5 frames. No multi-GPU host was lent: the 1-vs-2-GPU figure is not measured.\n\n")
                .append("| engines | frames | seconds (first to last record) | frames/s |\n|---|---|---|---|\n");
        String parts = System.getProperty("samstream.bench.parts", "throughput,failover,join");
        if (parts.contains("throughput")) {
            for (int n = 1; n <= 3; n++) {
                double[] r = throughput(dir, n, frames);
                md.append(String.format(Locale.ROOT, "| %d | %d | %.1f | %.1f |%n", n, (int) r[0], r[1], r[0] / r[1]));
                Files.writeString(out, md);
            }
        } else {
            md.append("| (not measured in this run) | | | |\n");
        }
        List<Long> resume = new ArrayList<>();
        List<Integer> twice = new ArrayList<>();
        List<Long> overlap = new ArrayList<>();
        List<String> joins = new ArrayList<>();
        boolean join = parts.contains("join");
        for (int k = 0; parts.contains("failover") && k < kills; k++) {
            long[] r = failover(dir, k, join);
            resume.add(r[0]);
            twice.add((int) r[1]);
            overlap.add(r[2]);
            if (join) {
                joins.add(r[3] + " ms / " + r[4]);
            }
            System.out.printf("kill %d: resumed after %d ms, %d frames twice, max overlap %d ms%s%n", k + 1, r[0], r[1],
                    r[2], join ? ", a 4th engine's first record " + r[3] + " ms after its start, " + r[4] + " stream(s)"
                            + " taken over" : "");
            List<Long> sorted = resume.stream().sorted().toList();
            String table = String.format(Locale.ROOT, "%nFailover over %d kills (SIGKILL of the engine owning the most"
                            + " streams; time from the kill to the first record of each of its streams elsewhere, the"
                            + " slowest per kill):%n%n| kills | p50 ms | max ms | frames processed twice per failover"
                            + " (mean / max) | max overlap ms |%n|---|---|---|---|---|%n| %d | %d | %d | %.1f / %d | %d |%n"
                            + "%nPer kill (ms): %s; frames twice: %s; max overlap (ms: how long two engines both published"
                            + " one stream, the largest handover of the round%s): %s%n", resume.size(), resume.size(),
                    sorted.get((sorted.size() - 1) / 2), sorted.get(sorted.size() - 1),
                    twice.stream().mapToInt(Integer::intValue).average().orElse(0),
                    twice.stream().mapToInt(Integer::intValue).max().orElse(0),
                    overlap.stream().mapToLong(Long::longValue).max().orElse(0), resume, twice,
                    join ? ", the join included" : "", overlap);
            if (join) {
                table += String.format("%nJoin: after each failover a fourth engine joined; from its start to its first"
                        + " record / the streams it took over, per kill: %s%n", joins);
            }
            Files.writeString(out, md + table);
        }
        System.out.println(Files.readString(out));
    }

    /** {frames, seconds from the first record to the last} with {@code n} engines. */
    private static double[] throughput(Path dir, int n, int frames) throws Exception {
        List<EngineProcess> engines = new ArrayList<>();
        try (EmbeddedKafkaBroker broker = ClusterKit.broker();
             KafkaProducer<String, byte[]> producer = KafkaTopics.producer(broker.bootstrapServers())) {
            String b = broker.bootstrapServers();
            ClusterKit.topics(broker, PARTITIONS);
            try (MaskTap tap = new MaskTap(b, ClusterKit.MASKS)) {
                for (int i = 0; i < n; i++) {
                    engines.add(EngineProcess.start("t" + n + "-" + i, ClusterKit.config(dir, "t" + n + "-" + i, b,
                            SamstreamRuntimePromptsTest.TINY, PARTITIONS, 5, SESSION_S + "s", ClusterKit.KEEP_TRACKS), dir));
                }
                // Every engine in the group before the streams come: none starts them all alone.
                ClusterHandoverTest.await(() -> engines.stream().allMatch(e -> count(e, "reads prompts of partitions") > 0)
                        && engines.stream().mapToLong(e -> count(e, "takes partitions")).sum() >= n,
                        "the engines in the group");
                Thread.sleep(2000);
                ClusterKit.defineFiles(producer, FILES, frames);
                int total = FILES.size() * frames;
                ClusterHandoverTest.await(() -> distinct(tap.records()) >= total, "every frame published");
                List<MaskTap.Seen> seen = tap.seen();
                long first = seen.get(0).atNanos();
                long last = seen.get(seen.size() - 1).atNanos();
                return new double[] {total, (last - first) / 1e9};
            }
        } finally {
            for (EngineProcess e : engines) {
                e.kill();
            }
        }
    }

    /**
     * {ms until the killed engine's streams flowed again (the slowest), frames of its files processed twice, the
     * largest overlap of a handover in ms (0 when none overlapped), and with {@code join}: ms from a fourth engine's
     * start to its first record, the streams it took over}.
     */
    private static long[] failover(Path dir, int round, boolean join) throws Exception {
        List<EngineProcess> engines = new ArrayList<>();
        try (EmbeddedKafkaBroker broker = ClusterKit.broker();
             KafkaProducer<String, byte[]> producer = KafkaTopics.producer(broker.bootstrapServers())) {
            String b = broker.bootstrapServers();
            ClusterKit.topics(broker, PARTITIONS);
            ClusterKit.defineFiles(producer, FILES, 100_000);
            try (MaskTap tap = new MaskTap(b, ClusterKit.MASKS)) {
                for (String name : List.of("k" + round + "a", "k" + round + "b", "k" + round + "c")) {
                    engines.add(EngineProcess.start(name, ClusterKit.config(dir, name, b, SamstreamRuntimePromptsTest.TINY,
                            PARTITIONS, 5, SESSION_S + "s", ClusterKit.KEEP_TRACKS), dir));
                }
                // Every stream running, on at least two engines (a loaded machine may leave one without).
                ClusterHandoverTest.await(() -> ClusterFailoverTest.running(engines).values().stream()
                        .filter(s -> !s.isEmpty()).count() >= 2 && published(tap, 10), "the engines running");
                Map<EngineProcess, Set<String>> owners = ClusterFailoverTest.running(engines);
                EngineProcess victim = engines.stream().max((x, y) -> owners.get(x).size() - owners.get(y).size())
                        .orElseThrow();
                Set<String> moved = owners.get(victim);
                long killedAt = System.nanoTime();
                victim.kill();
                Map<String, Long> resumed = new HashMap<>();
                ClusterHandoverTest.await(() -> {
                    for (MaskTap.Seen s : tap.seen()) {
                        if (moved.contains(s.record().stream()) && s.atNanos() > killedAt + 300_000_000L) {
                            resumed.putIfAbsent(s.record().stream(), (s.atNanos() - killedAt) / 1_000_000);
                        }
                    }
                    return resumed.keySet().containsAll(moved);
                }, "the killed engine's streams elsewhere");
                Thread.sleep(3000);
                Map<String, Integer> perFrame = new HashMap<>();
                for (MaskRecord r : tap.records()) {
                    if (moved.contains(r.stream())) {
                        perFrame.merge(r.stream() + "#" + r.frame(), 1, Integer::sum);
                    }
                }
                int twice = perFrame.values().stream().mapToInt(v -> v - 1).sum();
                long joinedAfter = -1;
                long taken = 0;
                if (join) {
                    String name = "k" + round + "d";
                    long startedAt = System.nanoTime();
                    engines.add(EngineProcess.start(name, ClusterKit.config(dir, name, b, SamstreamRuntimePromptsTest.TINY,
                            PARTITIONS, 5, SESSION_S + "s", ClusterKit.KEEP_TRACKS), dir));
                    ClusterHandoverTest.await(() -> tap.seen().stream().anyMatch(s -> s.engine().equals(name)),
                            "the joining engine publishing");
                    joinedAfter = (tap.seen().stream().filter(s -> s.engine().equals(name)).findFirst().orElseThrow()
                            .atNanos() - startedAt) / 1_000_000;
                    Thread.sleep(3000);
                    taken = ClusterKit.handovers(tap.seen(), SESSION_S).stream().filter(h -> h.to().equals(name)).count();
                }
                List<ClusterKit.Handover> handovers = ClusterKit.handovers(tap.seen(), SESSION_S);
                System.out.println(ClusterKit.describe(handovers));
                long overlap = ClusterKit.maxOverlapByStream(handovers).values().stream().mapToLong(Long::longValue)
                        .max().orElse(0);
                return new long[] {resumed.values().stream().mapToLong(Long::longValue).max().orElseThrow(), twice,
                        overlap, joinedAfter, taken};
            }
        } finally {
            for (EngineProcess e : engines) {
                e.kill();
            }
        }
    }

    private static boolean published(MaskTap tap, int frames) {
        Map<String, Integer> n = new HashMap<>();
        tap.records().forEach(r -> n.merge(r.stream(), 1, Integer::sum));
        return FILES.stream().allMatch(id -> n.getOrDefault(id, 0) >= frames);
    }

    private static int distinct(List<MaskRecord> records) {
        Set<String> keys = new HashSet<>();
        records.forEach(r -> keys.add(r.stream() + "#" + r.frame()));
        return keys.size();
    }

    private static long count(EngineProcess e, String fragment) {
        try {
            return e.count(fragment);
        } catch (java.io.IOException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
