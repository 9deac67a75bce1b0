package io.samstream.connectors.video;

import static org.bytedeco.ffmpeg.global.avutil.AVCOL_RANGE_JPEG;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_UNSPECIFIED;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_FLAG_RGB;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_RGB24;
import static org.bytedeco.ffmpeg.global.avutil.av_free;
import static org.bytedeco.ffmpeg.global.avutil.av_get_pix_fmt_name;
import static org.bytedeco.ffmpeg.global.avutil.av_malloc;
import static org.bytedeco.ffmpeg.global.avutil.av_pix_fmt_desc_get;
import static org.bytedeco.ffmpeg.global.swscale.SWS_BILINEAR;
import static org.bytedeco.ffmpeg.global.swscale.SWS_CS_ITU601;
import static org.bytedeco.ffmpeg.global.swscale.SWS_CS_ITU709;
import static org.bytedeco.ffmpeg.global.swscale.sws_freeContext;
import static org.bytedeco.ffmpeg.global.swscale.sws_getCachedContext;
import static org.bytedeco.ffmpeg.global.swscale.sws_getCoefficients;
import static org.bytedeco.ffmpeg.global.swscale.sws_scale;
import static org.bytedeco.ffmpeg.global.swscale.sws_setColorspaceDetails;

import java.io.IOException;

import org.bytedeco.ffmpeg.avutil.AVFrame;
import org.bytedeco.ffmpeg.avutil.AVPixFmtDescriptor;
import org.bytedeco.ffmpeg.swscale.SwsContext;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.DoublePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * Decoded frames (any pixel format FFmpeg decodes to: YUV 4:2:0/4:2:2/4:4:4, NV12 from NVDEC, ...)
 * to packed RGB24 Java arrays, by swscale at the frame's own size. Rebuilds its swscale context when
 * a stream changes size or format mid-way (an HLS variant switch).
 *
 * <p>Colour: the YUV matrix is the one the frame is tagged with; untagged frames get BT.709 from 720
 * lines up and BT.601 below, the convention players follow (swscale alone would take BT.601 always).
 * The range is full for frames tagged JPEG/full range (and the yuvj formats), else limited.
 */
final class RgbConverter implements AutoCloseable {
    /** Slack after the last row for swscale's block writes. */
    private static final int OVERRUN_PADDING = 256;

    private SwsContext sws;
    private int width;
    private int height;
    private int format = -1;
    private int colorspace = -1;
    private int range = -1;
    private BytePointer buffer;
    private int linesize;
    private final PointerPointer<BytePointer> dstData = new PointerPointer<>(4);
    private final IntPointer dstLinesize = new IntPointer(4);

    /** Converts one frame; the array is new and owned by the caller. */
    byte[] toRgb(String streamId, AVFrame frame) throws IOException {
        prepare(streamId, frame);
        int scaled = sws_scale(sws, frame.data(), frame.linesize(), 0, height, dstData, dstLinesize);
        if (scaled != height) {
            throw new IOException(streamId + ": pixel format conversion to RGB failed (" + scaled + " of " + height
                    + " rows)");
        }
        byte[] rgb = new byte[3 * width * height];
        int rowBytes = 3 * width;
        if (linesize == rowBytes) {
            buffer.position(0).get(rgb);
        } else {
            for (int y = 0; y < height; y++) {
                buffer.position((long) y * linesize).get(rgb, y * rowBytes, rowBytes);
            }
        }
        return rgb;
    }

    private void prepare(String streamId, AVFrame frame) throws IOException {
        int w = frame.width();
        int h = frame.height();
        int fmt = frame.format();
        int cs = frame.colorspace();
        int rng = frame.color_range();
        if (sws != null && w == width && h == height && fmt == format && cs == colorspace && rng == range) {
            return;
        }
        SwsContext next = sws_getCachedContext(sws, w, h, fmt, w, h, AV_PIX_FMT_RGB24, SWS_BILINEAR, null, null,
                (DoublePointer) null);
        if (next == null) {
            BytePointer name = av_get_pix_fmt_name(fmt);
            throw new IOException(streamId + ": cannot convert " + (name == null ? "pixel format " + fmt : name.getString())
                    + " " + w + "x" + h + " to RGB");
        }
        sws = next;
        if (!isRgb(fmt)) {
            int matrix = cs != AVCOL_SPC_UNSPECIFIED ? cs : h >= 720 ? SWS_CS_ITU709 : SWS_CS_ITU601;
            boolean fullRange = rng == AVCOL_RANGE_JPEG || isJpegFormat(fmt);
            // Same table on both sides: only the source side matters for a YUV -> RGB conversion.
            IntPointer table = sws_getCoefficients(matrix);
            sws_setColorspaceDetails(sws, table, fullRange ? 1 : 0, table, 1, 0, 1 << 16, 1 << 16);
        }
        if (w != width || h != height) {
            if (buffer != null) {
                av_free(buffer.position(0));
            }
            // swscale's SIMD writers store whole blocks of pixels: a row may be written past its width
            // (up to the next 32 pixels) and the last row past the buffer's end unless it has room.
            linesize = 3 * ((w + 31) & ~31);
            long size = (long) linesize * h + OVERRUN_PADDING;
            buffer = new BytePointer(av_malloc(size));
            if (buffer.isNull()) {
                throw new IOException(streamId + ": out of memory for a " + w + "x" + h + " RGB frame");
            }
            buffer.capacity(size);
            dstData.put(0, buffer);
            dstLinesize.put(0, linesize);
        }
        width = w;
        height = h;
        format = fmt;
        colorspace = cs;
        range = rng;
    }

    private static boolean isRgb(int pixelFormat) {
        AVPixFmtDescriptor descriptor = av_pix_fmt_desc_get(pixelFormat);
        return descriptor != null && (descriptor.flags() & AV_PIX_FMT_FLAG_RGB) != 0;
    }

    private static boolean isJpegFormat(int pixelFormat) {
        BytePointer name = av_get_pix_fmt_name(pixelFormat);
        return name != null && name.getString().startsWith("yuvj");
    }

    @Override
    public void close() {
        if (sws != null) {
            sws_freeContext(sws);
            sws = null;
        }
        if (buffer != null) {
            av_free(buffer.position(0));
            buffer = null;
        }
        dstData.close();
        dstLinesize.close();
    }
}
