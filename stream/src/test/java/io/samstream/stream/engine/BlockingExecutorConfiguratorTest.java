package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class BlockingExecutorConfiguratorTest {
    @Test
    void blockingTasksEachGetAThreadUpToTheBoundAndIdleThreadsAreReused() throws Exception {
        ThreadPoolExecutor e = BlockingExecutorConfigurator.newExecutor(8, Executors.defaultThreadFactory());
        try {
            // Short tasks one after the other: idle threads do them (a thread that has just finished may still count
            // as busy for an instant, so one or two more can start; a fixed-size pool would start 200).
            for (int i = 0; i < 200; i++) {
                e.submit(() -> { }).get(5, TimeUnit.SECONDS);
            }
            assertTrue(e.getPoolSize() <= 3, "idle threads are reused, got " + e.getPoolSize() + " threads");

            // Ten tasks that block together: eight run at once (the bound), the other two wait and then run.
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch started = new CountDownLatch(8);
            AtomicInteger done = new AtomicInteger();
            for (int i = 0; i < 10; i++) {
                e.execute(() -> {
                    started.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                    done.incrementAndGet();
                });
            }
            assertTrue(started.await(5, TimeUnit.SECONDS), "eight blocking tasks run at once");
            assertEquals(8, e.getPoolSize());
            assertEquals(2, e.getQueue().size(), "past the bound, tasks wait");
            release.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (done.get() < 10 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(10, done.get(), "the waiting tasks ran too");
            assertEquals(8, e.getPoolSize(), "never more threads than the bound");
        } finally {
            e.shutdownNow();
        }
    }
}
