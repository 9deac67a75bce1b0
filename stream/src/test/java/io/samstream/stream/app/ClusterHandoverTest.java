package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ConfigLoader;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.stream.engine.ClusterMember;
import io.samstream.stream.engine.StreamHandle;
import io.samstream.testkit.KafkaTopics;
import io.samstream.testkit.connectors.KafkaBrokerExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two engines of one group in this JVM: the second one joins while the first runs every stream, the
 * group moves some partitions to it (cooperative: the first stops those streams and writes their state
 * before the second gets them), and the moved streams go on from the frame after the last acknowledged
 * one, with their object ids and the prompts in force (a removal made on the first engine holds on the
 * second). Every frame has exactly one record; a prompt reaches exactly one engine.
 */
@Timeout(300)
class ClusterHandoverTest {
    private static final int FRAMES = 90;
    private static final List<String> IDS = List.of("cam-a", "cam-b", "cam-c", "cam-d", "cam-e", "cam-f");

    @TempDir
    Path dir;
    @RegisterExtension
    final KafkaBrokerExtension kafka = KafkaBrokerExtension.configured(ClusterKit::fastGroups);

    @Test
    void aJoiningEngineTakesStreamsOverWithTheirPlaceAndIds() throws Exception {
        try (KafkaProducer<String, byte[]> producer = kafka.producer()) {
            String b = kafka.bootstrapServers();
            Map<String, Long> firstHere = new HashMap<>();
            long takenUp;
            try (SamstreamRuntime one = SamstreamRuntime.start(ConfigLoader.load(ClusterKit.config(dir, "one", b,
                    SamstreamRuntimePromptsTest.TINY, 4, 5, "6s", ClusterKit.KEEP_TRACKS)), VideoConnectors.sources(), c -> Optional.empty())) {
                ClusterKit.defineFiles(producer, IDS, FRAMES);
                ClusterMember m1 = one.cluster().orElseThrow();
                await(() -> m1.ownedPartitions().size() == 4 && one.engine().streams().size() == IDS.size()
                        && one.engine().streams().stream().allMatch(h -> h.published() >= 10), "engine one runs all");
                // Object 1 removed from every stream on engine one: it must stay removed where a stream moves.
                for (String id : IDS) {
                    KafkaTopics.send(producer, ClusterKit.PROMPTS, id, "{\"stream\":\"" + id
                            + "\",\"op\":\"remove\",\"object\":1}");
                }
                await(() -> m1.prompts().accepted() == IDS.size(), "engine one removed object 1 everywhere");
                try (SamstreamRuntime two = SamstreamRuntime.start(ConfigLoader.load(ClusterKit.config(dir, "two", b,
                        SamstreamRuntimePromptsTest.TINY, 4, 5, "6s", ClusterKit.KEEP_TRACKS)), VideoConnectors.sources(),
                        c -> Optional.empty())) {
                    ClusterMember m2 = two.cluster().orElseThrow();
                    await(() -> m2.ownedPartitions().size() == 2 && m1.ownedPartitions().size() == 2,
                            "the partitions are shared out");
                    assertTrue(disjoint(m1.ownedPartitions(), m2.ownedPartitions()));
                    await(() -> m2.resumed() > 0 && !two.engine().streams().isEmpty(), "engine two took a stream over");
                    two.engine().streams().forEach(h -> firstHere.put(h.id(), h.started().firstFrame()));
                    // A prompt for a stream that runs: handled by its engine only, rejected by none.
                    String moved = two.engine().streams().stream().map(StreamHandle::id).findFirst().orElseThrow();
                    KafkaTopics.send(producer, ClusterKit.PROMPTS, moved, "{\"stream\":\"" + moved
                            + "\",\"op\":\"add\",\"object\":7,\"points\":[[20,20,1]]}");
                    await(() -> m2.prompts().accepted() == 1, "the prompt was applied by engine two");
                    Thread.sleep(500);
                    assertEquals(IDS.size(), m1.prompts().accepted());
                    assertEquals(0, m1.prompts().rejected());
                    assertEquals(0, m2.prompts().rejected());
                    await(() -> one.engine().streams().isEmpty() && two.engine().streams().isEmpty(),
                            "every clip ended");
                    takenUp = m2.tracksTakenUp();
                }
            }
            List<MaskRecord> records = kafka.readMasks(ClusterKit.MASKS, IDS.size() * FRAMES);
            Map<String, TreeMap<Long, List<MaskRecord>>> byStream = ClusterKit.byStreamAndFrame(records);
            int repeats = 0;
            for (String id : IDS) {
                TreeMap<Long, List<MaskRecord>> frames = byStream.get(id);
                assertEquals(FRAMES, frames.size(), id + ": every frame has a record");
                assertEquals(0L, frames.firstKey());
                assertEquals(FRAMES - 1L, frames.lastKey());
                for (List<MaskRecord> r : frames.values()) {
                    repeats += r.size() - 1;
                }
            }
            assertEquals(0, repeats, "a handover on revoke repeats no frame");
            assertTrue(takenUp > 0, "tracks were taken up, not seeded again");
            for (Map.Entry<String, Long> moved : firstHere.entrySet()) {
                TreeMap<Long, List<MaskRecord>> frames = byStream.get(moved.getKey());
                long first = moved.getValue();
                assertTrue(first > 0, moved.getKey() + " went on after frame 0");
                Set<Integer> before = ids(frames.headMap(first, false));
                Set<Integer> after = ids(frames.tailMap(first, true));
                after.remove(7); // the object the prompt added
                assertFalse(ids(frames.subMap(first, true, first, true)).isEmpty(), "objects right after the move");
                assertTrue(before.containsAll(after), moved.getKey() + ": ids before " + before + ", after " + after);
                assertTrue(before.contains(1), moved.getKey() + ": object 1 was tracked before its removal");
                assertFalse(after.contains(1), moved.getKey() + ": object 1, removed on engine one, came back after the"
                        + " move to engine two (frame " + first + ")");
            }
        }
    }

    private static Set<Integer> ids(Map<Long, List<MaskRecord>> frames) {
        Set<Integer> ids = new HashSet<>();
        frames.values().stream().flatMap(List::stream).forEach(r -> {
            r.objects().forEach(o -> ids.add(o.id()));
            ids.addAll(r.hidden());
        });
        return ids;
    }

    private static boolean disjoint(Set<Integer> a, Set<Integer> b) {
        Set<Integer> both = new HashSet<>(a);
        both.retainAll(b);
        return both.isEmpty();
    }

    static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 120 s: " + what);
            }
            Thread.sleep(50);
        }
    }
}
