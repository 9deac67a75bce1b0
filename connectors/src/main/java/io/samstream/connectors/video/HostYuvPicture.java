package io.samstream.connectors.video;

import static org.bytedeco.ffmpeg.global.avutil.AVCOL_RANGE_JPEG;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_YUV420P;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_YUVJ420P;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import org.bytedeco.ffmpeg.avutil.AVFrame;
import org.bytedeco.javacpp.BytePointer;

/**
 * A CPU decoder's 8-bit YUV 4:2:0 frame (yuv420p, yuvj420p) kept as it came, for a GPU backend: the engine
 * copies its planes into its upload staging ({@link #copyPlanes}, half the bytes of RGB) and converts them on
 * the GPU, so the frame is never converted to RGB on the host unless a sink asks ({@link #rgb}).
 *
 * <p>The picture holds a reference on FFmpeg's frame until {@link #release} (idempotent; the engine calls it
 * when the frame's record is done); a picture dropped without it is released when collected.
 */
public final class HostYuvPicture {
    private final String streamId;
    private final int width;
    private final int height;
    private final YuvMatrix matrix;
    private final boolean fullRange;
    private final FrameRef ref;
    private byte[] rgb;

    /** Whether a decoded frame's pixel format is one this picture takes. */
    static boolean takes(AVFrame frame) {
        return frame.format() == AV_PIX_FMT_YUV420P || frame.format() == AV_PIX_FMT_YUVJ420P;
    }

    /** Takes a new reference on a CPU-decoded yuv420p / yuvj420p frame (the caller keeps and unrefs its own). */
    static HostYuvPicture of(String streamId, AVFrame frame) throws IOException {
        if (!takes(frame)) {
            throw new IllegalArgumentException(streamId + ": a host YUV picture takes yuv420p and yuvj420p frames, got"
                    + " pixel format " + frame.format());
        }
        return new HostYuvPicture(streamId, frame);
    }

    private HostYuvPicture(String streamId, AVFrame frame) throws IOException {
        this.streamId = streamId;
        this.width = frame.width();
        this.height = frame.height();
        this.matrix = YuvMatrix.of(frame);
        this.fullRange = frame.color_range() == AVCOL_RANGE_JPEG || frame.format() == AV_PIX_FMT_YUVJ420P;
        this.ref = new FrameRef(streamId, frame, this);
    }

    public int width() {
        return width;
    }

    public int height() {
        return height;
    }

    public YuvMatrix matrix() {
        return matrix;
    }

    /** Full (JPEG) range; else limited (16-235 luma). */
    public boolean fullRange() {
        return fullRange;
    }

    /** Bytes {@link #copyPlanes} writes. */
    public long planeBytes() {
        long cw = (width + 1) / 2;
        long ch = (height + 1) / 2;
        return (long) width * height + 2 * cw * ch;
    }

    /**
     * Writes the planes at {@code dst}'s position, tightly packed (I420: luma, then Cb, then Cr, without the
     * decoder's row padding), and advances it by {@link #planeBytes}.
     *
     * @throws IllegalStateException when the picture was released first
     */
    public void copyPlanes(ByteBuffer dst) {
        ref.with(frame -> {
            int cw = (width + 1) / 2;
            int ch = (height + 1) / 2;
            copyPlane(frame.data(0), frame.linesize(0), width, height, dst);
            copyPlane(frame.data(1), frame.linesize(1), cw, ch, dst);
            copyPlane(frame.data(2), frame.linesize(2), cw, ch, dst);
            return null;
        }, streamId + ": the decoded frame was released before its planes were read");
    }

    private static void copyPlane(BytePointer plane, int pitch, int w, int h, ByteBuffer dst) {
        if (pitch == w) {
            dst.put(plane.position(0).capacity((long) w * h).asByteBuffer());
            return;
        }
        ByteBuffer src = plane.position(0).capacity((long) pitch * (h - 1) + w).asByteBuffer();
        for (int y = 0; y < h; y++) {
            src.limit(y * pitch + w).position(y * pitch);
            dst.put(src);
        }
    }

    /** The frame as 8-bit RGB on the host, converted at the first call (for sinks that draw on it), then kept. */
    public synchronized byte[] rgb() {
        if (rgb == null) {
            rgb = ref.with(frame -> {
                try (RgbConverter converter = new RgbConverter()) {
                    return converter.toRgb(streamId, frame);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, streamId + ": the decoded frame was released before its RGB was read");
        }
        return rgb;
    }

    /** Whether {@link #release} ran. */
    public boolean released() {
        return ref.released();
    }

    /** Drops the reference on FFmpeg's frame (its buffers go back to the decoder's pool). */
    public void release() {
        ref.release();
    }
}
