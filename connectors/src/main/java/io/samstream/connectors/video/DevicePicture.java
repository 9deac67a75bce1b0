package io.samstream.connectors.video;

import static org.bytedeco.ffmpeg.global.avutil.AVCOL_RANGE_JPEG;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_BT2020_CL;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_BT2020_NCL;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_BT709;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_UNSPECIFIED;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_NV12;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_P010LE;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_P016LE;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_alloc;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_clone;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_free;
import static org.bytedeco.ffmpeg.global.avutil.av_hwframe_transfer_data;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ref.Cleaner;
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
    /** The YUV to RGB matrix, by the luma weights of red and blue. */
    public enum Matrix {
        BT601(0.299f, 0.114f), BT709(0.2126f, 0.0722f), BT2020(0.2627f, 0.0593f);

        public final float kr;
        public final float kb;

        Matrix(float kr, float kb) {
            this.kr = kr;
            this.kb = kb;
        }
    }

    private static final Cleaner CLEANER = Cleaner.create();

    private final String streamId;
    private final int width;
    private final int height;
    private final long luma;
    private final long chroma;
    private final int lumaPitch;
    private final int chromaPitch;
    private final boolean sixteenBit;
    private final Matrix matrix;
    private final boolean fullRange;
    private final Held held;
    private final Cleaner.Cleanable cleanable;
    private byte[] rgb;

    /** FFmpeg's frame, freed once. */
    private static final class Held implements Runnable {
        AVFrame frame;

        @Override
        public synchronized void run() {
            if (frame != null) {
                av_frame_free(frame);
                frame = null;
            }
        }
    }

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
        AVFrame ref = av_frame_clone(frame);
        if (ref == null) {
            throw new IOException(streamId + ": out of memory referencing a GPU frame");
        }
        int cs = frame.colorspace();
        Matrix matrix = cs == AVCOL_SPC_BT709 ? Matrix.BT709
                : cs == AVCOL_SPC_BT2020_NCL || cs == AVCOL_SPC_BT2020_CL ? Matrix.BT2020
                : cs == AVCOL_SPC_UNSPECIFIED ? (frame.height() >= 720 ? Matrix.BT709 : Matrix.BT601) : Matrix.BT601;
        return new DevicePicture(streamId, ref, sw != AV_PIX_FMT_NV12, matrix, frame.color_range() == AVCOL_RANGE_JPEG);
    }

    private DevicePicture(String streamId, AVFrame frame, boolean sixteenBit, Matrix matrix, boolean fullRange) {
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
        this.held = new Held();
        held.frame = frame;
        this.cleanable = CLEANER.register(this, held);
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

    public Matrix matrix() {
        return matrix;
    }

    /** Full (JPEG) range; else limited (16-235 luma). */
    public boolean fullRange() {
        return fullRange;
    }

    /** Whether {@link #release} ran. */
    public boolean released() {
        synchronized (held) {
            return held.frame == null;
        }
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
        synchronized (held) {
            if (held.frame == null) {
                throw new IllegalStateException(streamId + ": the GPU frame was released before its RGB was read");
            }
            AVFrame host = av_frame_alloc();
            try (RgbConverter converter = new RgbConverter()) {
                int r = av_hwframe_transfer_data(host, held.frame, 0);
                if (r < 0) {
                    throw new UncheckedIOException(new IOException(streamId + ": downloading a GPU frame failed: "
                            + Ffmpeg.describe(r)));
                }
                host.colorspace(held.frame.colorspace());
                host.color_range(held.frame.color_range());
                rgb = converter.toRgb(streamId, host);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } finally {
                av_frame_free(host);
            }
        }
        return rgb;
    }

    /** Drops the reference on FFmpeg's frame (its GPU memory goes back to the decoder's pool). */
    public void release() {
        cleanable.clean();
    }
}
