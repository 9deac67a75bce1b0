package io.samstream.stream.http;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Calls per second per client (a token bucket per address: {@code rate} tokens a second, at most {@code rate} held,
 * so a burst of {@code rate} calls passes at once). Addresses idle for a minute are forgotten, and at most
 * {@link #MAX_CLIENTS} are remembered (the oldest idle first), so many clients cannot grow it without bound.
 */
final class RateLimiter {
    static final int MAX_CLIENTS = 10_000;
    private static final long FORGET_NANOS = 60_000_000_000L;

    private final double rate;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();
    private final java.util.function.LongSupplier clock;

    private static final class Bucket {
        double tokens;
        long last;

        Bucket(double tokens, long last) {
            this.tokens = tokens;
            this.last = last;
        }
    }

    RateLimiter(int perSecond) {
        this(perSecond, System::nanoTime);
    }

    RateLimiter(int perSecond, java.util.function.LongSupplier nanoClock) {
        this.rate = perSecond;
        this.clock = nanoClock;
    }

    /** Takes one call of {@code client}; false when it is over its rate (the call is refused). */
    boolean tryAcquire(String client) {
        long now = clock.getAsLong();
        if (buckets.size() >= MAX_CLIENTS) {
            buckets.values().removeIf(b -> now - b.last > FORGET_NANOS);
            if (buckets.size() >= MAX_CLIENTS) {
                return false; // a flood of addresses: refuse rather than grow
            }
        }
        Bucket b = buckets.computeIfAbsent(client, c -> new Bucket(rate, now));
        synchronized (b) {
            b.tokens = Math.min(rate, b.tokens + (now - b.last) * rate / 1e9);
            b.last = now;
            if (b.tokens >= 1) {
                b.tokens -= 1;
                return true;
            }
            return false;
        }
    }
}
