package io.samstream.stream.http;

import io.samstream.connectors.record.MaskRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Each stream's live figures, from its published frames: frames per second over the last {@link #WINDOW}, capture to
 * acknowledgement latency p50/p99 over its last {@link #SAMPLES} frames, its last record (the objects the API and the
 * console show) and each object's state (visible, hidden; lost for {@link #LOST_FOR} after it was reported lost). Cheap
 * per frame on the pipeline's thread (its objects' ids); the
 * percentiles are worked out when asked for.
 */
final class StreamFigures {
    static final int SAMPLES = 256;
    static final Duration WINDOW = Duration.ofSeconds(5);
    /** Lost ids remembered per stream (the oldest forgotten first). */
    static final int MAX_LOST = 256;
    /** How long an object reported lost is listed as lost (unless it shows again). */
    static final Duration LOST_FOR = Duration.ofSeconds(10);

    /** An object's state in its stream's latest frames. */
    enum ObjectState { VISIBLE, HIDDEN, LOST }

    /** What {@link #of} answers: the figures now. */
    record Snapshot(double fps, double p50Millis, double p99Millis, long frames, Optional<MaskRecord> last,
            Map<Integer, ObjectState> objects) {}

    private final Map<String, One> streams = new ConcurrentHashMap<>();

    /** One stream's ring of (published at, latency) and its last record. */
    private static final class One {
        final long[] at = new long[SAMPLES];
        final long[] latency = new long[SAMPLES];
        long count;
        final long firstAt = System.nanoTime();
        MaskRecord last;
        final Map<Integer, ObjectState> states = new LinkedHashMap<>();
        /** When each lost id was reported lost (nanoTime). */
        final Map<Integer, Long> lostAt = new LinkedHashMap<>();
        int lost;

        synchronized void add(MaskRecord r, long nowNanos, long latencyNanos) {
            int i = (int) (count % SAMPLES);
            at[i] = nowNanos;
            latency[i] = latencyNanos;
            count++;
            last = r;
            for (MaskRecord.ObjectMask o : r.objects()) {
                if (states.put(o.id(), ObjectState.VISIBLE) == ObjectState.LOST) {
                    lost--;
                }
            }
            for (int id : r.hidden()) {
                if (states.put(id, ObjectState.HIDDEN) == ObjectState.LOST) {
                    lost--;
                }
            }
            for (int id : r.lost()) {
                if (states.put(id, ObjectState.LOST) != ObjectState.LOST) {
                    lost++;
                }
                lostAt.put(id, nowNanos);
            }
            // Lost objects are listed for LOST_FOR (a removed one may have been reported lost first).
            lostAt.entrySet().removeIf(e -> {
                boolean old = nowNanos - e.getValue() > LOST_FOR.toNanos() || states.get(e.getKey()) != ObjectState.LOST;
                if (old && states.get(e.getKey()) == ObjectState.LOST) {
                    states.remove(e.getKey());
                    lost--;
                }
                return old;
            });
            // An object neither in this frame nor lost is gone (removed, or a reset): forget it.
            states.entrySet().removeIf(e -> e.getValue() != ObjectState.LOST && !inFrame(r, e.getKey()));
            if (lost > MAX_LOST) {
                var it = states.entrySet().iterator();
                while (lost > MAX_LOST && it.hasNext()) {
                    var e = it.next();
                    if (e.getValue() == ObjectState.LOST) {
                        it.remove();
                        lostAt.remove(e.getKey());
                        lost--;
                    }
                }
            }
        }

        synchronized Snapshot snapshot(long nowNanos) {
            int n = (int) Math.min(count, SAMPLES);
            long since = nowNanos - WINDOW.toNanos();
            int recent = 0;
            long oldest = Long.MAX_VALUE;
            long newest = Long.MIN_VALUE;
            long[] l = new long[n];
            for (int i = 0; i < n; i++) {
                l[i] = latency[i];
                if (at[i] >= since) {
                    recent++;
                    oldest = Math.min(oldest, at[i]);
                    newest = Math.max(newest, at[i]);
                }
            }
            Arrays.sort(l);
            double fps;
            if (recent == 0) {
                fps = 0;
            } else if (recent == SAMPLES && newest > oldest) {
                fps = (recent - 1) / ((newest - oldest) / 1e9); // the ring holds less than the window
            } else {
                // Over the window, or over the stream's age when it is younger (at least a second).
                double seconds = Math.max(1, Math.min(WINDOW.toNanos(), nowNanos - firstAt) / 1e9);
                fps = recent / seconds;
            }
            return new Snapshot(fps, n == 0 ? Double.NaN : l[(int) Math.floor(0.5 * (n - 1))] / 1e6,
                    n == 0 ? Double.NaN : l[(int) Math.floor(0.99 * (n - 1))] / 1e6, count, Optional.ofNullable(last),
                    Map.copyOf(states));
        }
    }

    private static boolean inFrame(MaskRecord r, int id) {
        for (MaskRecord.ObjectMask o : r.objects()) {
            if (o.id() == id) {
                return true;
            }
        }
        return r.hidden().contains(id);
    }

    /** A published frame of {@code stream}. */
    void published(String stream, MaskRecord record) {
        long now = System.nanoTime();
        long latency = Math.max(0, Duration.between(record.capturedAt(), Instant.now()).toNanos());
        streams.computeIfAbsent(stream, s -> new One()).add(record, now, latency);
    }

    /** The figures of {@code stream} now (zeros before its first published frame). */
    Snapshot of(String stream) {
        One o = streams.get(stream);
        if (o == null) {
            return new Snapshot(0, Double.NaN, Double.NaN, 0, Optional.empty(), Map.of());
        }
        return o.snapshot(System.nanoTime());
    }

    /** Forgets a stream (its run ended). */
    void forget(String stream) {
        streams.remove(stream);
    }

    /** The streams with figures (tests). */
    List<String> streams() {
        return List.copyOf(streams.keySet());
    }
}
