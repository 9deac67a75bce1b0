package io.samstream.connectors.video;

import static org.bytedeco.ffmpeg.global.avutil.AVCOL_RANGE_JPEG;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_NV12;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_P010LE;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_P016LE;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_alloc;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_free;
import static org.bytedeco.ffmpeg.global.avutil.av_hwframe_transfer_data;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.bytedeco.ffmpeg.avutil.AVFrame;
import org.bytedeco.ffmpeg.avutil.AVHWFramesContext;

/**
 * A decoded frame that NVDEC left in GPU memory (FFmpeg's CUDA hardware frame, on the primary CUDA context
 * of its GPU): the luma and interleaved chroma planes of NV12 (8-bit) or P010/P016 (16-bit words), their
 * pitches and the colour matrix and range. The engine's GPU pre-processing reads the planes in place; the
 * host gets RGB only when a sink asks ({@link #rgb}: downloaded and converted like a CPU-decoded frame).
 *
 * <p>The picture holds a reference on FFmpeg's frame until {@link #release} (idempotent; the engine calls it
 * when the frame's record is done); a picture dropped without it is released when collected.
 */
public final class DevicePicture {
    private final String streamId;
    private final int width;
    private final int height;
    private final long luma;
    private final long chroma;
    private final int lumaPitch;
    private final int chromaPitch;
    private final boolean sixteenBit;
    private final YuvMatrix matrix;
    private final boolean fullRange;
    private final FrameRef ref;
    private byte[] rgb;

    /**
     * Takes a new reference on a CUDA hardware frame (the caller keeps and unrefs its own).
     *
     * @throws IOException when the frame is not NV12 / P010 / P016 in CUDA memory
     */
    static DevicePicture of(String streamId, AVFrame frame) throws IOException {
        if (frame.hw_frames_ctx() == null) {
            throw new IOException(streamId + ": NVDEC gave a frame without a hardware frames context");
        }
        AVHWFramesContext frames = new AVHWFramesContext(frame.hw_frames_ctx().data());
        int sw = frames.sw_format();
        if (sw != AV_PIX_FMT_NV12 && sw != AV_PIX_FMT_P010LE && sw != AV_PIX_FMT_P016LE) {
            throw new IOException(streamId + ": NVDEC gave GPU frames in pixel format " + sw
                    + "; the engine reads NV12, P010 and P016");
        }
        return new DevicePicture(streamId, frame, sw != AV_PIX_FMT_NV12, YuvMatrix.of(frame),
                frame.color_range() == AVCOL_RANGE_JPEG);
    }

    private DevicePicture(String streamId, AVFrame frame, boolean sixteenBit, YuvMatrix matrix, boolean fullRange)
            throws IOException {
        this.streamId = streamId;
        this.width = frame.width();
        this.height = frame.height();
        this.luma = frame.data(0).address();
        this.chroma = frame.data(1).address();
        this.lumaPitch = frame.linesize(0);
        this.chromaPitch = frame.linesize(1);
        this.sixteenBit = sixteenBit;
        this.matrix = matrix;
        this.fullRange = fullRange;
        this.ref = new FrameRef(streamId, frame, this);
    }

    public int width() {
        return width;
    }

    public int height() {
        return height;
    }

    /** Device address of the luma plane (valid until {@link #release}). */
    public long luma() {
        return luma;
    }

    /** Device address of the interleaved chroma plane (U, V), half the luma's height. */
    public long chroma() {
        return chroma;
    }

    public int lumaPitch() {
        return lumaPitch;
    }

    public int chromaPitch() {
        return chromaPitch;
    }

    /** True for 16-bit samples (P010 / P016: the value in the high bits), false for NV12's bytes. */
    public boolean sixteenBit() {
        return sixteenBit;
    }

    public YuvMatrix matrix() {
        return matrix;
    }

    /** Full (JPEG) range; else limited (16-235 luma). */
    public boolean fullRange() {
        return fullRange;
    }

    /** Whether {@link #release} ran. */
    public boolean released() {
        return ref.released();
    }

    /**
     * The frame as 8-bit RGB on the host: downloaded and converted as a CPU-decoded frame would be, at the
     * first call (for sinks that draw on it), then kept.
     *
     * @throws IllegalStateException when the picture was released first
     */
    public synchronized byte[] rgb() {
        if (rgb != null) {
            return rgb;
        }
        rgb = ref.with(this::download, streamId + ": the GPU frame was released before its RGB was read");
        return rgb;
    }

    private byte[] download(AVFrame gpu) {
        AVFrame host = av_frame_alloc();
        try (RgbConverter converter = new RgbConverter()) {
            int r = av_hwframe_transfer_data(host, gpu, 0);
            if (r < 0) {
                throw new UncheckedIOException(new IOException(streamId + ": downloading a GPU frame failed: "
                        + Ffmpeg.describe(r)));
            }
            host.colorspace(gpu.colorspace());
            host.color_range(gpu.color_range());
            return converter.toRgb(streamId, host);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            av_frame_free(host);
        }
    }

    /** Drops the reference on FFmpeg's frame (its GPU memory goes back to the decoder's pool). */
    public void release() {
        ref.release();
    }
}
