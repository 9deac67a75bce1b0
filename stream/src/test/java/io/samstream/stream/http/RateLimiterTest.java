package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The prompt rate: a burst of {@code rate} calls, then {@code rate} a second, per client. */
class RateLimiterTest {
    @Test
    void aBurstThenTheRatePerClient() {
        AtomicLong now = new AtomicLong(1_000_000_000L);
        RateLimiter limiter = new RateLimiter(5, now::get);
        int passed = 0;
        for (int i = 0; i < 12; i++) {
            passed += limiter.tryAcquire("10.0.0.1") ? 1 : 0;
        }
        assertEquals(5, passed, "the burst");
        assertTrue(limiter.tryAcquire("10.0.0.2"), "another client has its own bucket");
        now.addAndGet(200_000_000L); // 0.2 s: one more
        assertTrue(limiter.tryAcquire("10.0.0.1"));
        assertFalse(limiter.tryAcquire("10.0.0.1"));
        now.addAndGet(10_000_000_000L); // a long pause refills to the burst, not beyond
        passed = 0;
        for (int i = 0; i < 12; i++) {
            passed += limiter.tryAcquire("10.0.0.1") ? 1 : 0;
        }
        assertEquals(5, passed);
    }

    @Test
    void aFloodOfClientsDoesNotGrowItWithoutBound() {
        AtomicLong now = new AtomicLong();
        RateLimiter limiter = new RateLimiter(1, now::get);
        for (int i = 0; i < RateLimiter.MAX_CLIENTS; i++) {
            assertTrue(limiter.tryAcquire("client-" + i));
        }
        assertFalse(limiter.tryAcquire("one-too-many"), "refused while every remembered client is recent");
        now.addAndGet(61_000_000_000L);
        assertTrue(limiter.tryAcquire("one-too-many"), "idle clients forgotten after a minute");
    }
}
