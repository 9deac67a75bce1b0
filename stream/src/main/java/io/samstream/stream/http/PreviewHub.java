package io.samstream.stream.http;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.stream.engine.FrameTap;
import io.samstream.stream.engine.StreamHandle;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's {@link FrameTap}: every published frame feeds its stream's {@link StreamFigures}; a frame of a stream
 * someone watches, at most {@code preview-fps} a second, is kept and handed to a small pool of its own, which reads its
 * pixels (a GPU frame's are downloaded there, not on the pipeline), lets the frame go, and makes one preview per width
 * its viewers asked for ({@link PreviewRenderer}) into each viewer's drop-oldest queue. A stream nobody watches costs a
 * map lookup per frame: its frames are never downloaded or encoded. When the pool is busy (its queue full) a frame is
 * skipped, never waited for: the pipeline's thread never blocks here.
 */
final class PreviewHub implements FrameTap, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PreviewHub.class);
    /** Preview widths are multiples of this (viewers asking for nearby widths share one encoding). */
    static final int WIDTH_STEP = 16;

    private final StreamFigures figures;
    private final Function<String, Optional<StreamHandle>> running;
    private final long minIntervalNanos;
    private final Semaphore slots;
    private final int maxViewers;
    private final ThreadPoolExecutor pool;
    private final Map<String, Watched> watched = new ConcurrentHashMap<>();
    private final Set<Object> seen = ConcurrentHashMap.newKeySet();
    private final AtomicLong made = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();

    /** A watched stream: its viewers, when its last preview was taken, its latest preview per width. */
    private static final class Watched {
        final CopyOnWriteArrayList<Viewer> viewers = new CopyOnWriteArrayList<>();
        final AtomicLong lastTaken = new AtomicLong(Long.MIN_VALUE / 2);
        final Map<Integer, Preview> latest = new ConcurrentHashMap<>();
    }

    /**
     * @param running the stream now running under an id (a stream's figures are dropped when its run ends and no
     *                other run of it took its place)
     */
    PreviewHub(int maxViewers, int previewFps, StreamFigures figures, Function<String, Optional<StreamHandle>> running) {
        this.figures = figures;
        this.running = running;
        this.maxViewers = maxViewers;
        this.slots = new Semaphore(maxViewers);
        this.minIntervalNanos = 1_000_000_000L / previewFps;
        int threads = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors() / 2));
        AtomicInteger n = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(Math.max(4, 2 * maxViewers)), r -> {
                    Thread t = new Thread(r, "samstream-preview-" + n.incrementAndGet());
                    t.setDaemon(true);
                    t.setPriority(Thread.NORM_PRIORITY - 1); // the pipeline's threads come first
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
    }

    @Override
    public boolean published(StreamHandle stream, MaskRecord record, VideoFrame frame) {
        return published(stream, stream.id(), stream.result(), record, frame);
    }

    /**
     * A published frame of the run {@code run} (any object standing for it) of stream {@code id}, which ends when
     * {@code ended} completes.
     */
    boolean published(Object run, String id, java.util.concurrent.CompletionStage<?> ended, MaskRecord record,
            VideoFrame frame) {
        figures.published(id, record);
        if (seen.add(run)) {
            ended.whenComplete((r, e) -> {
                seen.remove(run);
                if (running.apply(id).isEmpty()) {
                    figures.forget(id);
                }
            });
        }
        Watched w = watched.get(id);
        if (w == null || w.viewers.isEmpty()) {
            return false;
        }
        long now = System.nanoTime();
        long last = w.lastTaken.get();
        if (now - last < minIntervalNanos || !w.lastTaken.compareAndSet(last, now)) {
            return false;
        }
        try {
            pool.execute(new Render(w, record, frame));
            return true;
        } catch (RejectedExecutionException e) {
            skipped.incrementAndGet();
            return false;
        }
    }

    /** A kept frame waiting for the pool (released without a preview if the hub closes first). */
    private final class Render implements Runnable {
        final Watched watched;
        final MaskRecord record;
        final VideoFrame frame;

        Render(Watched watched, MaskRecord record, VideoFrame frame) {
            this.watched = watched;
            this.record = record;
            this.frame = frame;
        }

        @Override
        public void run() {
            render(watched, record, frame);
        }
    }

    private void render(Watched w, MaskRecord record, VideoFrame frame) {
        byte[] rgb;
        try {
            rgb = frame.rgb();
        } catch (RuntimeException e) {
            log.debug("stream {}: no pixels for a preview of frame {}: {}", record.stream(), record.frame(), e.toString());
            return;
        } finally {
            frame.release();
        }
        try {
            Set<Integer> widths = new java.util.TreeSet<>();
            w.viewers.forEach(v -> widths.add(v.width()));
            long now = System.nanoTime();
            for (int width : widths) {
                Preview p = PreviewRenderer.render(record, rgb, width, now);
                w.latest.put(width, p);
                made.incrementAndGet();
                for (Viewer v : w.viewers) {
                    if (v.width() == width) {
                        v.offer(p);
                    }
                }
            }
        } catch (RuntimeException e) {
            log.warn("stream {}: preview of frame {} failed: {}", record.stream(), record.frame(), e.toString());
        } catch (LinkageError e) {
            // The JRE cannot encode JPEG (e.g. a jlink'ed runtime without its libjpeg): no preview can be made, but
            // the render threads and the streams go on; said once, not per frame.
            if (!encoderBroken) {
                encoderBroken = true;
                log.error("previews: JPEG encoding is unavailable in this Java runtime ({}); viewers get no frames",
                        e.toString());
            }
        }
    }

    /** Set once JPEG encoding failed with a linkage error (said once). */
    private volatile boolean encoderBroken;

    /** A preview width: {@code requested} rounded down to a multiple of {@link #WIDTH_STEP} (at least one step). */
    static int width(int requested) {
        return Math.max(WIDTH_STEP, requested / WIDTH_STEP * WIDTH_STEP);
    }

    /**
     * Takes a viewer slot and registers {@code viewer}; from now on its stream's frames are previewed.
     *
     * @throws ApiException 429 when {@code max-viewers} viewers are open, 503 when previews are off
     */
    void open(Viewer viewer) {
        if (maxViewers == 0) {
            throw new ApiException(503, "live previews are off (samstream.http.max-viewers = 0)", "max-viewers");
        }
        if (!slots.tryAcquire()) {
            throw new ApiException(429, maxViewers + " previews are open already, the most samstream.http.max-viewers"
                    + " allows", "max-viewers");
        }
        watched.compute(viewer.stream(), (s, w) -> {
            Watched x = w == null ? new Watched() : w;
            x.viewers.add(viewer);
            return x;
        });
    }

    /** Unregisters {@code viewer} and frees its slot (once; later calls do nothing). */
    void close(Viewer viewer) {
        boolean[] removed = new boolean[1];
        watched.computeIfPresent(viewer.stream(), (s, w) -> {
            removed[0] = w.viewers.remove(viewer);
            return w.viewers.isEmpty() ? null : w;
        });
        if (removed[0]) {
            slots.release();
        }
    }

    /** The latest preview of {@code stream} at {@code width}, when one was made within {@code maxAgeNanos}. */
    Optional<Preview> latest(String stream, int width, long maxAgeNanos) {
        Watched w = watched.get(stream);
        Preview p = w == null ? null : w.latest.get(width);
        return p != null && System.nanoTime() - p.madeAt() <= maxAgeNanos ? Optional.of(p) : Optional.empty();
    }

    /** Viewers open now. */
    int viewers() {
        return maxViewers - slots.availablePermits();
    }

    /** Streams watched now. */
    Set<String> watchedStreams() {
        return Set.copyOf(watched.keySet());
    }

    /** Previews made so far, and frames skipped because the pool was busy. */
    long made() {
        return made.get();
    }

    long skipped() {
        return skipped.get();
    }

    StreamFigures figures() {
        return figures;
    }

    @Override
    public void close() {
        for (Runnable r : pool.shutdownNow()) {
            if (r instanceof Render task) {
                task.frame.release();
            }
        }
    }
}
