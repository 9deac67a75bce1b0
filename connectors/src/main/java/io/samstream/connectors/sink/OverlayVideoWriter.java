package io.samstream.connectors.sink;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.samstream.connectors.video.VideoFrame;

/**
 * Writes one stream's frames with their masks drawn on them ({@link MaskOverlay}) to a video file,
 * by convention {@value #FILE_NAME} in the run's output directory, for people to look at.
 *
 * <p>The codec is H.264 when the bundled FFmpeg has an encoder for it (libopenh264 in the standard
 * build), else MPEG-4 part 2; the log says which. The MP4 is fragmented (a fragment per 2 s keyframe
 * interval), so a file cut short by a crash still plays up to its last fragment.
 *
 * <p>The frame size is fixed by the first frame; the file is created then. A frame of another size
 * or of another stream is an error. Timestamps are the frames' pts, rebased to start at 0; one that
 * goes backwards (a live source that reconnected) is placed one frame interval after the previous.
 * Not thread-safe: the engine writes a stream's frames from one place.
 */
public final class OverlayVideoWriter implements AutoCloseable {
    public static final String FILE_NAME = "overlay.mp4";
    private static final Logger LOG = LoggerFactory.getLogger(OverlayVideoWriter.class);
    /** Fragmented MP4: playable up to the last complete fragment if the process dies. */
    private static final Map<String, String> FRAGMENTED_MP4 = Map.of("movflags", "+frag_keyframe+empty_moov+default_base_moof");

    private final Path file;
    private final String streamId;
    private final double fps;
    private final String encoder;
    private FfmpegVideoWriter writer;
    private int width;
    private int height;
    private long firstPts;
    private long lastPts;
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
    public void write(VideoFrame frame, List<ObjectMask> masks) throws IOException {
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
    }

    private void start(VideoFrame frame) throws IOException {
        width = frame.width();
        height = frame.height();
        firstPts = frame.ptsMillis();
        try {
            writer = FfmpegVideoWriter.open(file, width, height, fps, encoder, FRAGMENTED_MP4);
        } catch (IOException e) {
            throw new IOException(streamId + ": cannot write the overlay video: " + e.getMessage(), e);
        }
        String codec = writer.codecName();
        LOG.info("{}: overlay video {} {}x{} encoded with {} ({})", streamId, file, width, height, codec,
                FfmpegVideoWriter.H264_ENCODERS.contains(codec) ? "H.264"
                        : codec.equals(FfmpegVideoWriter.FALLBACK_ENCODER)
                                ? "MPEG-4 part 2: this FFmpeg has no H.264 encoder" : "as asked");
    }

    /** The encoder in use; null before the first frame. */
    public String codecName() {
        return writer == null ? null : writer.codecName();
    }

    public long framesWritten() {
        return writer == null ? 0 : writer.framesWritten();
    }

    /** Finishes the file; without a frame written, no file is created. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        if (writer != null) {
            writer.close();
        }
    }
}
