package io.samstream.stream.app;

import io.samstream.stream.engine.StreamHandle;
import java.io.PrintWriter;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shows how far the streams are: on a terminal one line redrawn in place (a bar when the frame count
 * is known), otherwise a log line every few seconds.
 */
final class Progress implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Progress.class);
    private static final int BAR = 30;

    private final PrintWriter out;
    private final boolean terminal;
    private final Supplier<List<StreamHandle>> streams;
    private final OptionalLong totalFrames;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "samstream-progress");
        t.setDaemon(true);
        return t;
    });
    private final long start = System.nanoTime();
    private final Totals totals = new Totals();
    private boolean drawn;

    /**
     * @param terminal    redraw a line on {@code out} (System.console() != null) rather than log
     * @param totalFrames the frames the file streams have in all, when known
     */
    Progress(PrintWriter out, boolean terminal, Supplier<List<StreamHandle>> streams, OptionalLong totalFrames) {
        this.out = out;
        this.terminal = terminal;
        this.streams = streams;
        this.totalFrames = totalFrames;
        long period = terminal ? 250 : 5000;
        timer.scheduleAtFixedRate(this::show, period, period, TimeUnit.MILLISECONDS);
    }

    private synchronized void show() {
        List<StreamHandle> running = streams.get();
        long[] counts = totals.update(running.stream()
                .map(h -> new Counts(h, h::published, h::dropped)).toList());
        long published = counts[0];
        long dropped = counts[1];
        double seconds = (System.nanoTime() - start) / 1e9;
        String rate = String.format(Locale.ROOT, "%.1f frames/s", published / Math.max(seconds, 1e-3));
        String line;
        if (totalFrames.isPresent() && totalFrames.getAsLong() > 0) {
            long total = totalFrames.getAsLong();
            int filled = (int) Math.min(BAR, BAR * published / total);
            line = String.format(Locale.ROOT, "[%s%s] %d/%d frames  %s", "#".repeat(filled), ".".repeat(BAR - filled),
                    published, total, rate);
        } else {
            line = String.format(Locale.ROOT, "%d stream(s)  %d frames published  %d dropped  %s", running.size(),
                    published, dropped, rate);
        }
        if (terminal) {
            out.print("\r" + line + "   ");
            out.flush();
            drawn = true;
        } else if (!running.isEmpty()) {
            log.info("progress: {}", line);
        }
    }

    /** One stream's counts, read when needed (an ended stream's last time); {@code stream} identifies it. */
    record Counts(Object stream, java.util.function.LongSupplier published, java.util.function.LongSupplier dropped) {}

    /**
     * Frames published and dropped by every stream the progress has seen: the running ones' counts plus
     * the last counts of those that ended since (they leave the running list), never below a total
     * shown before. Holds only the running streams.
     */
    static final class Totals {
        private Map<Object, Counts> last = new IdentityHashMap<>();
        private long endedPublished;
        private long endedDropped;
        private long shown;

        /** @return {published, dropped} */
        long[] update(List<Counts> running) {
            Map<Object, Counts> now = new IdentityHashMap<>();
            running.forEach(c -> now.put(c.stream(), c));
            for (Counts c : last.values()) {
                if (!now.containsKey(c.stream())) { // its final counts
                    endedPublished += c.published().getAsLong();
                    endedDropped += c.dropped().getAsLong();
                }
            }
            last = now;
            long published = endedPublished;
            long dropped = endedDropped;
            for (Counts c : running) {
                published += c.published().getAsLong();
                dropped += c.dropped().getAsLong();
            }
            shown = Math.max(shown, published);
            return new long[] {shown, dropped};
        }
    }

    /** Draws the last state and ends the line. */
    @Override
    public synchronized void close() {
        timer.shutdownNow();
        if (terminal && drawn) {
            out.println();
            out.flush();
        }
    }

    /** For the final line: set the counts of the finished streams to show 100%. */
    void finish(List<StreamHandle> handles) {
        timer.shutdownNow();
        synchronized (this) {
            if (terminal) {
                long published = handles.stream().mapToLong(StreamHandle::published).sum();
                long total = totalFrames.orElse(published);
                int filled = total == 0 ? BAR : (int) Math.min(BAR, BAR * published / total);
                out.print("\r" + String.format(Locale.ROOT, "[%s%s] %d/%d frames", "#".repeat(filled),
                        ".".repeat(BAR - filled), published, total) + "            ");
                out.flush();
                drawn = true;
            }
        }
    }
}
