package io.samstream.stream.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;

/**
 * Progress of a long {@code segment} step on stderr: "segment: decoding prompt sets: 40/256 (16 %), 12.0 s",
 * at most once per {@code every}, and at the end when any line was printed before (or {@code always}).
 */
final class StepProgress {
    static final Duration EVERY = Duration.ofSeconds(2);

    private final PrintWriter err;
    private final String what;
    private final long every;
    private final boolean always;
    private final long start = System.nanoTime();
    private long last = start;
    private boolean printed;
    private long shown = -1;

    StepProgress(PrintWriter err, String what, Duration every, boolean always) {
        this.err = err;
        this.what = what;
        this.every = every.toNanos();
        this.always = always;
    }

    /** {@code done} of {@code total} finished. Never shows a count below one shown before. */
    synchronized void step(long done, long total) {
        long now = System.nanoTime();
        boolean end = done >= total;
        if (done <= shown || !(now - last >= every || end && (printed || always))) {
            return;
        }
        last = now;
        shown = done;
        printed = true;
        err.printf(Locale.ROOT, "segment: %s: %d/%d (%d %%), %.1f s%n", what, done, total,
                total == 0 ? 100 : done * 100 / total, (now - start) / 1e9);
        err.flush();
    }
}
