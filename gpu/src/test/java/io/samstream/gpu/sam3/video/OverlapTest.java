package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** How a step's detection runs beside the propagation: where, when, and what its failures become. */
class OverlapTest {
    @Test
    void serialWorkRunsOnTheCallersThreadWhenJoinedAndNeverWhenAbandoned() {
        try (Overlap o = Overlap.serial()) {
            assertFalse(o.overlaps());
            AtomicReference<Thread> ran = new AtomicReference<>();
            Overlap.Pending<Integer> p = o.start(() -> {
                ran.set(Thread.currentThread());
                return 7;
            });
            assertEquals(null, ran.get(), "deferred until joined");
            assertEquals(7, p.join());
            assertSame(Thread.currentThread(), ran.get());

            AtomicBoolean never = new AtomicBoolean();
            o.start(() -> never.getAndSet(true)).abandon(new IllegalStateException("the propagation failed"));
            assertFalse(never.get());
        }
    }

    @Test
    void threadedWorkStartsAtOnceOnAHelperWhileTheCallerGoesOn() throws Exception {
        try (Overlap o = Overlap.threads()) {
            assertTrue(o.overlaps());
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch callerDone = new CountDownLatch(1);
            AtomicReference<Thread> ran = new AtomicReference<>();
            Overlap.Pending<String> p = o.start(() -> {
                ran.set(Thread.currentThread());
                started.countDown();
                try {
                    // ends only after the caller's own work: the two really run at once
                    assertTrue(callerDone.await(10, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return "found";
            });
            assertTrue(started.await(10, TimeUnit.SECONDS), "started before join");
            callerDone.countDown();
            assertEquals("found", p.join());
            assertNotEquals(Thread.currentThread(), ran.get());
            assertTrue(ran.get().isDaemon());
            assertTrue(ran.get().getName().startsWith("sam3-detect-"), ran.get().getName());
        }
    }

    @Test
    void aHelpersFailureReachesTheJoinUnwrapped() {
        try (Overlap o = Overlap.threads()) {
            IllegalArgumentException thrown = new IllegalArgumentException("detector: bad phrase");
            Overlap.Pending<Object> p = o.start(() -> {
                throw thrown;
            });
            assertSame(thrown, assertThrows(IllegalArgumentException.class, p::join));
            Overlap.Pending<Object> err = o.start(() -> {
                throw new OutOfMemoryError("host");
            });
            assertThrows(OutOfMemoryError.class, err::join);
        }
    }

    @Test
    void abandoningWaitsForTheHelperAndKeepsItsFailureBesideTheCallers() {
        try (Overlap o = Overlap.threads()) {
            AtomicBoolean finished = new AtomicBoolean();
            Overlap.Pending<Object> p = o.start(() -> {
                sleep(200);
                finished.set(true);
                throw new IllegalStateException("the detection failed too");
            });
            RuntimeException caller = new IllegalStateException("the propagation failed");
            p.abandon(caller);
            assertTrue(finished.get(), "the helper is done with the frame before the caller goes on");
            assertEquals(1, caller.getSuppressed().length);
            assertEquals("the detection failed too", caller.getSuppressed()[0].getMessage());
        }
    }

    @Test
    void anInterruptedCallerStillWaitsForTheHelperAndKeepsTheFlag() {
        try (Overlap o = Overlap.threads()) {
            Overlap.Pending<Integer> p = o.start(() -> {
                sleep(200);
                return 3;
            });
            Thread.currentThread().interrupt();
            try {
                assertEquals(3, p.join());
                assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept for the caller");
            } finally {
                Thread.interrupted();
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
