package io.samstream.stream.track;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a stream's tracker counts: objects lost, discovered and re-identified, scene cuts (counters), tracks
 * alive now (a gauge's value).
 */
public record TrackingMeters(Counter lost, Counter discovered, Counter reidentified, Counter sceneCuts,
        AtomicInteger active) {
    /** Meters that go nowhere (tests). */
    public static TrackingMeters none() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        return new TrackingMeters(r.counter("lost"), r.counter("discovered"), r.counter("reidentified"),
                r.counter("scene-cuts"), new AtomicInteger());
    }
}
