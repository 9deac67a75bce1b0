package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.ActorSystem;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link DeadlineBatcher}: full batches while busy, a lone frame at once while idle, a deadline, the tail flushed. */
class DeadlineBatcherTest {
    static ActorSystem system;

    @BeforeAll
    static void start() {
        system = ActorSystem.create("batcher-test");
    }

    @AfterAll
    static void stop() {
        system.terminate();
    }

    private static List<List<Integer>> run(int n, int max, Duration latency, boolean idle) throws Exception {
        return Source.from(IntStream.range(0, n).boxed().toList())
                .via(new DeadlineBatcher<Integer>(max, latency, () -> idle))
                .runWith(Sink.seq(), system).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void whileBusyBatchesFillAndTheLastOneLeavesWhenTheInputEnds() throws Exception {
        assertEquals(List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7), List.of(8, 9)),
                run(10, 4, Duration.ofSeconds(30), false));
    }

    @Test
    void whileIdleEachFrameLeavesAtOnce() throws Exception {
        List<List<Integer>> batches = run(5, 4, Duration.ofSeconds(30), true);
        assertEquals(List.of(List.of(0), List.of(1), List.of(2), List.of(3), List.of(4)), batches);
    }

    @Test
    void aBatchThatDoesNotFillLeavesAtItsDeadline() throws Exception {
        AtomicBoolean idle = new AtomicBoolean(false);
        long t0 = System.nanoTime();
        List<List<Integer>> batches = Source.single(7).concat(Source.maybe())
                .via(new DeadlineBatcher<Integer>(8, Duration.ofMillis(200), idle::get))
                .take(1).runWith(Sink.seq(), system).toCompletableFuture().get(10, TimeUnit.SECONDS);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(List.of(List.of(7)), batches);
        assertTrue(ms >= 190, "left after " + ms + " ms, before its 200 ms deadline");
    }
}
