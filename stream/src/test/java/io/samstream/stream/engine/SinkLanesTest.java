package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SinkLanesTest {
    @Test
    void aStreamKeepsOneThreadAndItsOrderWhileOthersRunAtOnce() throws Exception {
        try (SinkLanes lanes = new SinkLanes(4)) {
            // Two streams on different lanes.
            String a = "cam-a";
            String b = null;
            for (int i = 0; b == null; i++) {
                if (lanes.of("cam-" + i) != lanes.of(a)) {
                    b = "cam-" + i;
                }
            }
            Map<String, List<Integer>> order = new ConcurrentHashMap<>();
            Map<String, List<String>> threads = new ConcurrentHashMap<>();
            CountDownLatch bothRunning = new CountDownLatch(2);
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int frame = 0; frame < 50; frame++) {
                for (String s : List.of(a, b)) {
                    int f = frame;
                    all.add(CompletableFuture.runAsync(() -> {
                        if (f == 0) {
                            bothRunning.countDown();
                            try {
                                // Each stream's first record waits for the other's: only lanes of their own get here.
                                assertTrue(bothRunning.await(10, TimeUnit.SECONDS), "the other stream's lane ran meanwhile");
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                        order.computeIfAbsent(s, k -> new CopyOnWriteArrayList<>()).add(f);
                        threads.computeIfAbsent(s, k -> new CopyOnWriteArrayList<>()).add(Thread.currentThread().getName());
                    }, lanes.of(s)));
                }
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
            for (String s : List.of(a, b)) {
                List<Integer> want = new ArrayList<>();
                for (int f = 0; f < 50; f++) {
                    want.add(f);
                }
                assertEquals(want, order.get(s), s + ": in frame order");
                assertEquals(1, threads.get(s).stream().distinct().count(), s + ": one thread");
                assertTrue(threads.get(s).get(0).startsWith("samstream-sinks-"));
            }
            assertNotEquals(threads.get(a).get(0), threads.get(b).get(0));

            List<String> ranOn = new CopyOnWriteArrayList<>();
            lanes.runOn(a, () -> ranOn.add(Thread.currentThread().getName()), Duration.ofSeconds(5));
            assertEquals(threads.get(a).get(0), ranOn.get(0), "a stream's sink task runs on its lane");
        }
    }
}
