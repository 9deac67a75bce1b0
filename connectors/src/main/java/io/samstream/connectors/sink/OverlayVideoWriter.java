package io.samstream.connectors.sink;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.samstream.connectors.video.VideoFrame;

/**
 * Writes one stream's frames with their masks drawn on them ({@link MaskOverlay}) to a video file,
 * by convention {@value #FILE_NAME} in the run's output directory, for people to look at.
 *
 * <p>The codec is H.264 when the bundled FFmpeg has an encoder for it (libopenh264 in the standard
 * build), else MPEG-4 part 2; the log says which. The MP4 is fragmented, and a fragment is handed to
 * the operating system at every keyframe (2 s) and at the latest {@link #FLUSH_INTERVAL} after a
 * frame was written (wall clock: also when no later frame comes), so a file cut short by a crash or
 * {@code kill -9} plays up to about a second before it.
 *
 * <p>A video file has one frame size, fixed by its first frame (the file is created then). When a
 * stream's frame size changes (a camera switched resolution, an MPEG-TS whose SPS changes), the current
 * file is finished and a new segment begins: {@code overlay.mp4} stays the first segment's name, the
 * next ones are {@code overlay-0001.mp4}, {@code overlay-0002.mp4}, ... ({@link #segmentFile}); each is
 * a playable video of its own, logged when it starts. A frame of another stream is an error. Timestamps
 * are the frames' pts, rebased to start at 0 in each segment; one that goes backwards (a live source that
 * reconnected) is placed one frame interval after the previous. A file that exists already (an earlier
 * run's) is kept as {@code NAME.1.mp4}, {@code NAME.2.mp4}, ... rather than overwritten.
 * The engine writes a stream's frames from one place; a shared timer thread flushes (the methods are
 * synchronized).
 */
public final class OverlayVideoWriter implements AutoCloseable {
    public static final String FILE_NAME = "overlay.mp4";
    private static final Logger LOG = LoggerFactory.getLogger(OverlayVideoWriter.class);
    /** Fragmented MP4: playable up to the last complete fragment if the process dies. */
    private static final Map<String, String> FRAGMENTED_MP4 = Map.of("movflags", "+frag_keyframe+empty_moov+default_base_moof");
    /** The longest a written frame waits before its fragment goes to the file. */
    public static final Duration FLUSH_INTERVAL = Duration.ofSeconds(1);
    private static final long TICK_MILLIS = 200;
    /** Open writers with frames not yet flushed are flushed by this one daemon thread. */
    private static final Set<OverlayVideoWriter> OPEN = ConcurrentHashMap.newKeySet();
    private static final ScheduledExecutorService FLUSHER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "samstream-overlay-flush");
        t.setDaemon(true);
        return t;
    });

    static {
        FLUSHER.scheduleWithFixedDelay(() -> OPEN.forEach(OverlayVideoWriter::flushIfDue), TICK_MILLIS, TICK_MILLIS,
                TimeUnit.MILLISECONDS);
    }

    private final Path first;
    /** The segment being written: {@link #first}, then {@code NAME-0001.EXT}, ... */
    private Path file;
    private int segment;
    private final String streamId;
    private final double fps;
    private final String encoder;
    private FfmpegVideoWriter writer;
    private int width;
    private int height;
    private long firstPts;
    private long lastPts;
    /** When a written frame first waited for a flush (nanoTime); 0 when none waits. */
    private long unflushedSince;
    private boolean closed;
    /** Frames of the segments finished before the current one. */
    private long framesBefore;

    /**
     * @param file     the first segment's file (an earlier file there is kept under another name); its extension
     *                 picks the container
     * @param streamId the stream whose frames it takes
     * @param fps      the stream's nominal frame rate
     */
    public OverlayVideoWriter(Path file, String streamId, double fps) {
        this(file, streamId, fps, null);
    }

    /** As above, with an FFmpeg encoder name instead of the default choice. */
    public OverlayVideoWriter(Path file, String streamId, double fps, String encoder) {
        if (!(fps > 0)) {
            throw new IllegalArgumentException(streamId + ": overlay fps must be positive, got " + fps);
        }
        this.first = file;
        this.file = file;
        this.streamId = streamId;
        this.fps = fps;
        this.encoder = encoder;
    }

    /** Draws the masks on the frame and encodes it. */
    public synchronized void write(VideoFrame frame, List<ObjectMask> masks) throws IOException {
        if (closed) {
            throw new IOException(streamId + ": overlay writer for " + file + " is closed");
        }
        if (!frame.streamId().equals(streamId)) {
            throw new IllegalArgumentException(streamId + ": overlay writer for " + file + " got a frame of stream "
                    + frame.streamId());
        }
        if (writer == null) {
            start(frame);
        } else if (frame.width() != width || frame.height() != height) {
            // A new frame size: this segment ends, the next one starts with this frame.
            finishSegment();
            segment++;
            file = segmentFile(first, segment);
            LOG.info("{}: frame {} is {}x{} where the overlay was {}x{}: a new segment, {}", streamId, frame.index(),
                    frame.width(), frame.height(), width, height, file.getFileName());
            start(frame);
        }
        byte[] drawn = MaskOverlay.draw(frame, masks);
        long pts = frame.ptsMillis() - firstPts;
        if (writer.framesWritten() > 0 && pts <= lastPts) {
            pts = lastPts + Math.max(1, Math.round(1000 / fps));
        }
        lastPts = pts;
        writer.write(drawn, pts);
        if (unflushedSince == 0) {
            unflushedSince = System.nanoTime();
        }
        if (System.nanoTime() - unflushedSince >= FLUSH_INTERVAL.toNanos()) {
            flush();
        }
    }

    /** Hands the frames written so far to the file now (a fragment of their own). */
    public synchronized void flush() throws IOException {
        if (writer != null && !closed && unflushedSince != 0) {
            writer.flush();
            unflushedSince = 0;
        }
    }

    /** The timer's check: frames waiting for {@link #FLUSH_INTERVAL} or longer are flushed. */
    private synchronized void flushIfDue() {
        if (closed || unflushedSince == 0 || System.nanoTime() - unflushedSince < FLUSH_INTERVAL.toNanos()) {
            return;
        }
        try {
            flush();
        } catch (IOException | RuntimeException e) {
            unflushedSince = 0; // the next write tries again and reports it
            LOG.warn("{}: flushing the overlay {} failed: {}", streamId, file, e.getMessage());
        }
    }

    /**
     * The file of segment {@code n} of an overlay whose first segment is {@code first}: {@code first} itself for 0,
     * else {@code STEM-NNNN.EXT} next to it ({@code overlay-0001.mp4}).
     */
    public static Path segmentFile(Path first, int n) {
        if (n == 0) {
            return first;
        }
        String name = first.getFileName().toString();
        int dot = name.lastIndexOf('.');
        String stem = dot > 0 ? name.substring(0, dot) : name;
        String ext = dot > 0 ? name.substring(dot) : "";
        return first.resolveSibling(String.format("%s-%04d%s", stem, n, ext));
    }

    /** The segments written so far (the one being written included). */
    public synchronized int segments() {
        return writer == null && segment == 0 ? 0 : segment + 1;
    }

    private void finishSegment() throws IOException {
        FfmpegVideoWriter w = writer;
        writer = null;
        unflushedSince = 0;
        framesBefore += w.framesWritten();
        w.close();
    }

    /** An earlier run's file at {@code path} is kept as {@code NAME.1.EXT}, {@code NAME.2.EXT}, ... */
    private void keepEarlier(Path path) throws IOException {
        if (!java.nio.file.Files.exists(path) || java.nio.file.Files.size(path) == 0) {
            return;
        }
        String name = path.getFileName().toString();
        int dot = name.lastIndexOf('.');
        String stem = dot > 0 ? name.substring(0, dot) : name;
        String ext = dot > 0 ? name.substring(dot) : "";
        for (int n = 1; ; n++) {
            Path kept = path.resolveSibling(stem + "." + n + ext);
            if (!java.nio.file.Files.exists(kept)) {
                java.nio.file.Files.move(path, kept);
                LOG.info("{}: the earlier run's {} is kept as {}", streamId, name, kept.getFileName());
                return;
            }
        }
    }

    private void start(VideoFrame frame) throws IOException {
        keepEarlier(file);
        width = frame.width();
        height = frame.height();
        firstPts = frame.ptsMillis();
        try {
            writer = FfmpegVideoWriter.open(file, width, height, fps, encoder, FRAGMENTED_MP4);
            writer.flush(); // the header: a file that holds nothing playable yet is still an MP4
        } catch (IOException e) {
            throw new IOException(streamId + ": cannot write the overlay video: " + e.getMessage(), e);
        }
        OPEN.add(this);
        String codec = writer.codecName();
        LOG.info("{}: overlay video {} {}x{} encoded with {} ({})", streamId, file, width, height, codec,
                FfmpegVideoWriter.H264_ENCODERS.contains(codec) ? "H.264"
                        : codec.equals(FfmpegVideoWriter.FALLBACK_ENCODER)
                                ? "MPEG-4 part 2: this FFmpeg has no H.264 encoder" : "as asked");
    }

    /** The encoder in use; null before the first frame. */
    public synchronized String codecName() {
        return writer == null ? null : writer.codecName();
    }

    /** Frames written in all segments. */
    public synchronized long framesWritten() {
        return framesBefore + (writer == null ? 0 : writer.framesWritten());
    }

    /** Finishes the file; without a frame written, no file is created. */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        OPEN.remove(this);
        if (writer != null) {
            writer.close();
        }
    }
}
