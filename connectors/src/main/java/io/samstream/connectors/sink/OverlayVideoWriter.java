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
 * <p>The frame size is fixed by the first frame; the file is created then. A frame of another size
 * or of another stream is an error. Timestamps are the frames' pts, rebased to start at 0; one that
 * goes backwards (a live source that reconnected) is placed one frame interval after the previous.
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

    private final Path file;
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

    /**
     * @param file     the video file to create (replaced if it exists); its extension picks the container
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
            throw new IllegalArgumentException(streamId + ": overlay " + file + " is " + width + "x" + height
                    + ", frame " + frame.index() + " is " + frame.width() + "x" + frame.height());
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

    private void start(VideoFrame frame) throws IOException {
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

    public synchronized long framesWritten() {
        return writer == null ? 0 : writer.framesWritten();
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
