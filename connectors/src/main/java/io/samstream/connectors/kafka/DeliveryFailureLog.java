package io.samstream.connectors.kafka;

import io.samstream.connectors.record.MaskRecord;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Logs records that could not be delivered without flooding the log: during a long outage every
 * frame of every stream fails. A failure is logged at once (with its stack trace) when none was in
 * the last interval; later ones are summed into one line per interval.
 */
final class DeliveryFailureLog {
    private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Logger log;
    private final String topic;
    private final AtomicLong unreported = new AtomicLong();
    /** When the next line may be written; 0 before the first. */
    private final AtomicLong nextReportNanos = new AtomicLong();

    DeliveryFailureLog(Logger log, String topic) {
        this.log = log;
        this.topic = topic;
    }

    void failed(MaskRecord record, Throwable error) {
        unreported.incrementAndGet();
        long now = System.nanoTime();
        long next = nextReportNanos.get();
        if (next != 0 && now - next < 0) {
            return;
        }
        if (!nextReportNanos.compareAndSet(next, now + INTERVAL_NANOS)) {
            return; // another thread reports
        }
        long count = unreported.getAndSet(0);
        if (count == 1) {
            log.error("Mask record of stream {} frame {} was not delivered to topic {}",
                    record.stream(), record.frame(), topic, error);
        } else {
            log.error("{} mask records were not delivered to topic {} in the last {}s; the latest: stream {} frame {}: {}",
                    count, topic, TimeUnit.NANOSECONDS.toSeconds(INTERVAL_NANOS), record.stream(), record.frame(),
                    error.toString());
        }
    }

    /** Logs the failures not reported yet (on close, so that none goes unmentioned). */
    void reportRemaining() {
        long count = unreported.getAndSet(0);
        if (count > 0) {
            log.error("{} more mask records were not delivered to topic {}", count, topic);
        }
    }
}
