package io.samstream.connectors.sink;

import static org.bytedeco.ffmpeg.global.avcodec.AV_CODEC_FLAG_GLOBAL_HEADER;
import static org.bytedeco.ffmpeg.global.avcodec.AV_CODEC_FLAG_QSCALE;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_alloc;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_free;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_rescale_ts;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_alloc_context3;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_find_encoder_by_name;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_free_context;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_open2;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_parameters_from_context;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_receive_packet;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_send_frame;
import static org.bytedeco.ffmpeg.global.avformat.AVFMT_GLOBALHEADER;
import static org.bytedeco.ffmpeg.global.avformat.AVFMT_NOFILE;
import static org.bytedeco.ffmpeg.global.avformat.AVIO_FLAG_WRITE;
import static org.bytedeco.ffmpeg.global.avformat.av_interleaved_write_frame;
import static org.bytedeco.ffmpeg.global.avformat.av_write_frame;
import static org.bytedeco.ffmpeg.global.avformat.av_write_trailer;
import static org.bytedeco.ffmpeg.global.avformat.avformat_alloc_output_context2;
import static org.bytedeco.ffmpeg.global.avformat.avformat_free_context;
import static org.bytedeco.ffmpeg.global.avformat.avformat_new_stream;
import static org.bytedeco.ffmpeg.global.avformat.avformat_write_header;
import static org.bytedeco.ffmpeg.global.avformat.avio_closep;
import static org.bytedeco.ffmpeg.global.avformat.avio_flush;
import static org.bytedeco.ffmpeg.global.avformat.avio_open;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_PRI_BT709;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_PRI_SMPTE170M;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_RANGE_MPEG;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_BT709;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_SPC_SMPTE170M;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_TRC_BT709;
import static org.bytedeco.ffmpeg.global.avutil.AVCOL_TRC_SMPTE170M;
import static org.bytedeco.ffmpeg.global.avutil.AVERROR_EAGAIN;
import static org.bytedeco.ffmpeg.global.avutil.AVERROR_EOF;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_RGB24;
import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_YUV420P;
import static org.bytedeco.ffmpeg.global.avutil.av_d2q;
import static org.bytedeco.ffmpeg.global.avutil.av_dict_free;
import static org.bytedeco.ffmpeg.global.avutil.av_dict_set;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_alloc;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_free;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_get_buffer;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_make_writable;
import static org.bytedeco.ffmpeg.global.swscale.SWS_BILINEAR;
import static org.bytedeco.ffmpeg.global.swscale.SWS_CS_ITU601;
import static org.bytedeco.ffmpeg.global.swscale.SWS_CS_ITU709;
import static org.bytedeco.ffmpeg.global.swscale.sws_freeContext;
import static org.bytedeco.ffmpeg.global.swscale.sws_getCoefficients;
import static org.bytedeco.ffmpeg.global.swscale.sws_getContext;
import static org.bytedeco.ffmpeg.global.swscale.sws_scale;
import static org.bytedeco.ffmpeg.global.swscale.sws_setColorspaceDetails;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.bytedeco.ffmpeg.avcodec.AVCodec;
import org.bytedeco.ffmpeg.avcodec.AVCodecContext;
import org.bytedeco.ffmpeg.avcodec.AVPacket;
import org.bytedeco.ffmpeg.avformat.AVFormatContext;
import org.bytedeco.ffmpeg.avformat.AVIOContext;
import org.bytedeco.ffmpeg.avformat.AVStream;
import org.bytedeco.ffmpeg.avutil.AVDictionary;
import org.bytedeco.ffmpeg.avutil.AVFrame;
import org.bytedeco.ffmpeg.avutil.AVRational;
import org.bytedeco.ffmpeg.swscale.SwsContext;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.DoublePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.PointerPointer;

import io.samstream.connectors.video.Ffmpeg;

/**
 * Encodes RGB24 frames into a video file with the bundled FFmpeg: the container follows the file's
 * extension (.mp4, .mkv, .avi, .ts, ...), the codec is given or {@link #defaultEncoder()}.
 *
 * <p>Frames go out as YUV 4:2:0, limited range, with the BT.709 matrix from 720 lines up and BT.601
 * below, tagged so: the same convention the decoding side (and players) assume for untagged video, so
 * colours survive containers that cannot carry the tags (AVI). 4:2:0 needs even sizes, so an odd width
 * or height is padded by repeating the last column or row. Timestamps are milliseconds;
 * one that does not increase is moved to just after the previous one (encoders refuse it otherwise).
 *
 * <p>Thread-safe (every method is synchronized), so a timer may {@link #flush} while another thread
 * writes; one writer per file.
 */
public final class FfmpegVideoWriter implements AutoCloseable {
    /** H.264 encoders in order of preference; the bundled LGPL build has libopenh264 (libx264 is GPL). */
    public static final List<String> H264_ENCODERS = List.of("libx264", "libopenh264");
    /** MPEG-4 part 2: in every FFmpeg build, the fallback. */
    public static final String FALLBACK_ENCODER = "mpeg4";

    private static final AVRational MILLIS = new AVRational().num(1).den(1000);

    private final Path file;
    private final int width;
    private final int height;
    private final int encodedWidth;
    private final int encodedHeight;
    private final String codecName;
    private AVFormatContext output;
    private AVCodecContext encoder;
    private AVStream stream;
    private SwsContext sws;
    private AVFrame frame;
    private AVPacket packet;
    private BytePointer rgbBuffer;
    private final PointerPointer<BytePointer> rgbPlanes = new PointerPointer<>(4);
    private final IntPointer rgbLinesize = new IntPointer(4);
    private long lastPts = Long.MIN_VALUE;
    private long frames;
    private boolean closed;

    private FfmpegVideoWriter(Path file, int width, int height, String codecName) {
        this.file = file;
        this.width = width;
        this.height = height;
        this.encodedWidth = width + (width & 1);
        this.encodedHeight = height + (height & 1);
        this.codecName = codecName;
    }

    /** The best encoder of this FFmpeg for an MP4 a browser plays: H.264 if there is one, else MPEG-4 part 2. */
    public static String defaultEncoder() throws IOException {
        for (String name : H264_ENCODERS) {
            if (Ffmpeg.hasEncoder(name)) {
                return name;
            }
        }
        return FALLBACK_ENCODER;
    }

    /**
     * Creates (or replaces) the file and writes the container header.
     *
     * @param fps           the nominal frame rate (rate control, the keyframe interval, the stream's rate)
     * @param encoder       an FFmpeg encoder name, or null for {@link #defaultEncoder()}
     * @param muxerOptions  options for the container, e.g. {@code movflags=+faststart}
     */
    public static FfmpegVideoWriter open(Path file, int width, int height, double fps, String encoder,
            Map<String, String> muxerOptions) throws IOException {
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException(file + ": frame size must be positive, got " + width + "x" + height);
        }
        if (!(fps > 0)) {
            throw new IllegalArgumentException(file + ": fps must be positive, got " + fps);
        }
        Ffmpeg.load();
        String codecName = encoder != null ? encoder : defaultEncoder();
        FfmpegVideoWriter writer = new FfmpegVideoWriter(file, width, height, codecName);
        try {
            writer.start(fps, muxerOptions);
            return writer;
        } catch (IOException | RuntimeException e) {
            writer.release();
            throw e;
        }
    }

    public String codecName() {
        return codecName;
    }

    public synchronized long framesWritten() {
        return frames;
    }

    public Path file() {
        return file;
    }

    private void start(double fps, Map<String, String> muxerOptions) throws IOException {
        Ffmpeg.clearLoggedErrors();
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        String url = file.toAbsolutePath().toString();
        output = new AVFormatContext(null);
        check(avformat_alloc_output_context2(output, null, null, url), "no container format for this file name");
        AVCodec codec = avcodec_find_encoder_by_name(codecName);
        if (codec == null) {
            throw new IOException(file + ": this FFmpeg build has no encoder " + codecName);
        }
        stream = avformat_new_stream(output, null);
        encoder = avcodec_alloc_context3(codec);
        if (stream == null || encoder == null) {
            throw new IOException(file + ": out of memory setting up the encoder");
        }
        encoder.width(encodedWidth);
        encoder.height(encodedHeight);
        encoder.pix_fmt(AV_PIX_FMT_YUV420P);
        encoder.time_base(MILLIS);
        AVRational rate = av_d2q(fps, 1001000);
        encoder.framerate(rate);
        encoder.gop_size(Math.max(1, (int) Math.round(fps * 2))); // a keyframe every 2 s: seeking, fragments
        encoder.max_b_frames(0);
        boolean hd = encodedHeight >= 720;
        encoder.colorspace(hd ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M);
        encoder.color_primaries(hd ? AVCOL_PRI_BT709 : AVCOL_PRI_SMPTE170M);
        encoder.color_trc(hd ? AVCOL_TRC_BT709 : AVCOL_TRC_SMPTE170M);
        encoder.color_range(AVCOL_RANGE_MPEG);
        if (codecName.equals(FALLBACK_ENCODER)) {
            encoder.flags(encoder.flags() | AV_CODEC_FLAG_QSCALE);
            encoder.global_quality(3 * org.bytedeco.ffmpeg.global.avutil.FF_QP2LAMBDA); // q=3: good, not huge
        } else {
            // ~0.15 bit per pixel: clean overlays at 1080p30 (~9 Mb/s), never below 400 kb/s for tiny frames
            encoder.bit_rate(Math.max(400_000L, (long) (encodedWidth * (double) encodedHeight * fps * 0.15)));
        }
        if ((output.oformat().flags() & AVFMT_GLOBALHEADER) != 0) {
            encoder.flags(encoder.flags() | AV_CODEC_FLAG_GLOBAL_HEADER);
        }
        check(avcodec_open2(encoder, codec, (AVDictionary) null), "encoder " + codecName + " cannot be opened");
        check(avcodec_parameters_from_context(stream.codecpar(), encoder), "stream parameters");
        stream.time_base(MILLIS);
        stream.avg_frame_rate(rate);

        if ((output.oformat().flags() & AVFMT_NOFILE) == 0) {
            AVIOContext io = new AVIOContext(null);
            check(avio_open(io, url, AVIO_FLAG_WRITE), "cannot create the file");
            output.pb(io);
        }
        AVDictionary options = new AVDictionary(null);
        try {
            if (muxerOptions != null) {
                muxerOptions.forEach((key, value) -> av_dict_set(options, key, value, 0));
            }
            check(avformat_write_header(output, options), "cannot write the container header");
        } finally {
            av_dict_free(options);
        }

        sws = sws_getContext(encodedWidth, encodedHeight, AV_PIX_FMT_RGB24, encodedWidth, encodedHeight,
                AV_PIX_FMT_YUV420P, SWS_BILINEAR, null, null, (DoublePointer) null);
        if (sws == null) {
            throw new IOException(file + ": no RGB to YUV conversion");
        }
        IntPointer matrix = sws_getCoefficients(encodedHeight >= 720 ? SWS_CS_ITU709 : SWS_CS_ITU601);
        sws_setColorspaceDetails(sws, matrix, 1, matrix, 0, 0, 1 << 16, 1 << 16);

        frame = av_frame_alloc();
        packet = av_packet_alloc();
        frame.format(AV_PIX_FMT_YUV420P);
        frame.width(encodedWidth);
        frame.height(encodedHeight);
        check(av_frame_get_buffer(frame, 0), "out of memory for a frame");
        // swscale's SIMD readers may load whole blocks past a row's end: slack after the last row.
        rgbBuffer = new BytePointer(3L * encodedWidth * encodedHeight + 256);
        rgbPlanes.put(0, rgbBuffer);
        rgbLinesize.put(0, 3 * encodedWidth);
    }

    /**
     * Encodes one frame.
     *
     * @param rgb       {@code 3 * width * height} bytes, rows top to bottom, R,G,B
     * @param ptsMillis its presentation time
     */
    public synchronized void write(byte[] rgb, long ptsMillis) throws IOException {
        if (closed) {
            throw new IOException(file + ": writer is closed");
        }
        if (rgb.length != 3 * width * height) {
            throw new IllegalArgumentException(file + ": expected a " + width + "x" + height + " RGB frame ("
                    + 3 * width * height + " bytes), got " + rgb.length + " bytes");
        }
        copyPadded(rgb);
        check(av_frame_make_writable(frame), "frame buffer");
        sws_scale(sws, rgbPlanes, rgbLinesize, 0, encodedHeight, frame.data(), frame.linesize());
        long pts = lastPts == Long.MIN_VALUE || ptsMillis > lastPts ? ptsMillis : lastPts + 1;
        lastPts = pts;
        frame.pts(pts);
        encode(frame);
        frames++;
    }

    private void copyPadded(byte[] rgb) {
        int row = 3 * width;
        int encodedRow = 3 * encodedWidth;
        if (row == encodedRow && height == encodedHeight) {
            rgbBuffer.position(0).put(rgb, 0, rgb.length);
            return;
        }
        for (int y = 0; y < encodedHeight; y++) {
            int sourceY = Math.min(y, height - 1);
            long at = (long) y * encodedRow;
            rgbBuffer.position(at).put(rgb, sourceY * row, row);
            if (encodedWidth != width) {
                int last = sourceY * row + row - 3;
                rgbBuffer.position(at + row).put(rgb, last, 3);
            }
        }
        rgbBuffer.position(0);
    }

    private void encode(AVFrame input) throws IOException {
        Ffmpeg.clearLoggedErrors();
        int result = avcodec_send_frame(encoder, input);
        if (result < 0 && result != AVERROR_EOF()) {
            check(result, "encoding failed");
        }
        while (true) {
            result = avcodec_receive_packet(encoder, packet);
            if (result == AVERROR_EAGAIN() || result == AVERROR_EOF()) {
                return;
            }
            check(result, "encoding failed");
            av_packet_rescale_ts(packet, encoder.time_base(), stream.time_base());
            packet.stream_index(stream.index());
            check(av_interleaved_write_frame(output, packet), "writing failed"); // takes the packet's data
        }
    }

    /**
     * Hands what the muxer holds to the operating system now: for a fragmented MP4 the frames since the
     * last fragment become a fragment of their own, so a crash after this keeps them playable. A no-op
     * when nothing is pending or the writer is closed.
     */
    public synchronized void flush() throws IOException {
        if (closed) {
            return;
        }
        Ffmpeg.clearLoggedErrors();
        check(av_write_frame(output, null), "flushing failed"); // NULL: the muxer's flush
        AVIOContext io = output.pb();
        if (io != null && !io.isNull()) {
            avio_flush(io);
        }
    }

    /** Flushes the encoder, writes the container's trailer and closes the file. */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            encode(null);
            check(av_write_trailer(output), "cannot finish the file");
        } finally {
            release();
        }
    }

    private void release() {
        closed = true;
        if (output != null && !output.isNull()) {
            AVIOContext io = output.pb();
            if (io != null && !io.isNull() && (output.oformat().flags() & AVFMT_NOFILE) == 0) {
                avio_closep(io);
                output.pb(null);
            }
            avformat_free_context(output);
        }
        output = null;
        if (encoder != null) {
            avcodec_free_context(encoder);
            encoder = null;
        }
        if (sws != null) {
            sws_freeContext(sws);
            sws = null;
        }
        if (frame != null) {
            av_frame_free(frame);
            frame = null;
        }
        if (packet != null) {
            av_packet_free(packet);
            packet = null;
        }
        if (rgbBuffer != null) {
            rgbBuffer.close();
            rgbBuffer = null;
        }
        rgbPlanes.close();
        rgbLinesize.close();
    }

    private void check(int result, String what) throws IOException {
        if (result < 0) {
            throw new IOException(file + ": " + what + ": " + Ffmpeg.describe(result));
        }
    }
}
