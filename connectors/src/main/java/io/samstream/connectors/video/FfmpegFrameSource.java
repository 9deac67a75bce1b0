package io.samstream.connectors.video;

import static org.bytedeco.ffmpeg.global.avutil.AV_PIX_FMT_CUDA;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_alloc;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_free;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_unref;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_get_name;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_receive_frame;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_send_packet;
import static org.bytedeco.ffmpeg.global.avutil.AVERROR_EAGAIN;
import static org.bytedeco.ffmpeg.global.avutil.AVERROR_EOF;
import static org.bytedeco.ffmpeg.global.avutil.AVERROR_INVALIDDATA;
import static org.bytedeco.ffmpeg.global.avutil.AV_NOPTS_VALUE;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_alloc;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_free;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_unref;
import static org.bytedeco.ffmpeg.global.avutil.av_rescale_q;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.function.BooleanSupplier;

import org.bytedeco.ffmpeg.avcodec.AVPacket;
import org.bytedeco.ffmpeg.avformat.AVStream;
import org.bytedeco.ffmpeg.avutil.AVFrame;
import org.bytedeco.ffmpeg.avutil.AVRational;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Frames from anything FFmpeg reads: files (any container and codec of the bundled build), network
 * streams (RTSP, RTMP, HTTP(S), HLS, SRT, UDP, ...) and V4L2 cameras, decoded by NVDEC or on the
 * CPU (see {@link DecoderPreference}) and converted to RGB24 by swscale. It ties together an
 * {@link FfmpegInput} (demuxing, timeouts), a {@link VideoDecoder} and an {@link RgbConverter}.
 *
 * <p>Opening resolves everything that can fail up front (the input, the stream info, the decoder),
 * so a missing, corrupt or unreachable source fails in {@link #open} with an {@link IOException}
 * naming the stream, the location (password redacted) and FFmpeg's reason.
 *
 * <p>Timestamps: {@code ptsMillis} is the frame's best-effort timestamp in the source's own timeline
 * (not rebased to 0: MPEG-TS and RTSP start anywhere); a frame without one gets the previous pts plus
 * one nominal frame duration. {@code capturedAt} is the wall clock when the frame was decoded.
 *
 * <p>Packets that fail to decode (corruption in the middle of a stream) are logged, counted
 * ({@link #decodeErrors()}) and skipped, as FFmpeg's own tools do; after
 * {@value #MAX_CONSECUTIVE_DECODE_ERRORS} in a row any source fails. A file (a source that is not
 * live) is held to more: it fails, with frames already returned staying returned, when
 * <ul>
 *   <li>more than {@value #MAX_CORRUPT_PACKETS} of its packets failed to decode (at once, mid-file:
 *       "cam-1: /v/a.mp4: 11 packets failed to decode (more than 10)");
 *   <li>at its end, fewer than {@value #MIN_DECLARED_FRAMES_PERCENT} % of the frames its container
 *       declares were decoded (nb_frames, else duration x frame rate; nothing is checked when the
 *       container declares neither or FFmpeg guessed the duration from the bitrate): a truncated
 *       file, "cam-1: /v/a.mp4 ends after 17 of 30 frames the container declares";
 *   <li>at its end, more than {@value #MAX_CORRUPT_PACKETS_PERCENT} % of its packets failed to decode:
 *       "cam-1: /v/a.mp4: 3 of 30 packets failed to decode (more than 5 %)".
 * </ul>
 * A packet fails to decode when the decoder rejects it as invalid data or returns its frame marked
 * as concealed (decode_error_flags). Live sources only count; the engine reconnects them anyway.
 *
 * <p>Threading: {@link #next()} from one thread at a time. {@link #close()} may also come from
 * another thread: it interrupts a blocked read, then releases everything once {@code next()} returns.
 */
public final class FfmpegFrameSource implements FrameSource {
    private static final Logger LOG = LoggerFactory.getLogger(FfmpegFrameSource.class);

    static final Duration DEFAULT_OPEN_TIMEOUT = Duration.ofSeconds(30);
    static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(15);
    static final int MAX_CONSECUTIVE_DECODE_ERRORS = 50;
    /** A file with more packets than this that failed to decode fails. */
    static final int MAX_CORRUPT_PACKETS = 10;
    /** A file ending with more than this share of its packets failed to decode fails. */
    static final int MAX_CORRUPT_PACKETS_PERCENT = 5;
    /** A file ending with fewer frames than this share of what its container declares fails. */
    static final int MIN_DECLARED_FRAMES_PERCENT = 90;
    private static final AVRational MILLIS = new AVRational().num(1).den(1000);

    private final String streamId;
    private final SourceLocation location;
    /** Null for files: they wait as long as the disk takes. */
    private final Duration readTimeout;
    private final FfmpegInput input;
    private final VideoDecoder decoder;
    private final RgbConverter converter = new RgbConverter();
    /** CPU-decoded 8-bit 4:2:0 frames as their planes ({@link HostYuvPicture}) instead of RGB: for a GPU backend. */
    private final boolean yuvPlanes;
    private final AVRational timeBase;
    private final long nominalFrameMillis;
    private final AVPacket packet = av_packet_alloc();
    private final AVFrame frame = av_frame_alloc();
    private final String description;
    private final Object lock = new Object();

    private boolean packetPending;
    private boolean inputEnded;
    private boolean decoderDrained;
    private boolean closed;
    private long nextIndex;
    private long lastPtsMillis = Long.MIN_VALUE;
    private int consecutiveDecodeErrors;
    /** Frames the container declares (0: unknown); checked at the end of a file. */
    private final long declaredFrames;
    private long packetsRead;
    private volatile int decodeErrors;
    /** Why the file failed (too many decode errors, or at its end); thrown again by every later next(). */
    private String failure;

    private FfmpegFrameSource(String streamId, SourceLocation location, Duration readTimeout, FfmpegInput input,
            VideoDecoder decoder, boolean yuvPlanes) {
        this.streamId = streamId;
        this.yuvPlanes = yuvPlanes;
        this.location = location;
        this.readTimeout = readTimeout;
        this.input = input;
        this.decoder = decoder;
        AVStream stream = input.videoStream();
        this.timeBase = new AVRational().num(stream.time_base().num()).den(stream.time_base().den());
        AVRational rate = stream.avg_frame_rate().num() > 0 ? stream.avg_frame_rate() : stream.r_frame_rate();
        this.nominalFrameMillis = rate.num() > 0 && rate.den() > 0
                ? Math.max(1, Math.round(1000.0 * rate.den() / rate.num())) : 40;
        this.declaredFrames = input.declaredFrames();
        this.description = streamId + " " + location.redacted() + " (" + decoder.name()
                + (decoder.hardware() ? ", NVDEC" : ", cpu") + ")";
    }

    /** Opens a file, network stream or camera; see {@link FrameSources} for the location syntax. */
    public static FfmpegFrameSource open(SourceSpec spec) throws IOException {
        return open(spec, SourceLocation.parse(spec.location()), VideoDecoder.NVIDIA_GPU_PRESENT);
    }

    static FfmpegFrameSource open(SourceSpec spec, SourceLocation location, BooleanSupplier gpuPresent)
            throws IOException {
        if (location.kind() == SourceLocation.Kind.TEST_PATTERN) {
            throw new IllegalArgumentException(spec.streamId() + ": " + location.text() + " is not an FFmpeg input");
        }
        SourceOptions options = SourceOptions.split(spec.streamId(), spec.options());
        Ffmpeg.load();
        if (location.kind() == SourceLocation.Kind.CAMERA) {
            try {
                Ffmpeg.loadDevices();
            } catch (IOException e) {
                throw new IOException(spec.streamId() + ": cannot open camera " + location.text() + ": " + e.getMessage(), e);
            }
        }
        boolean live = options.live().orElse(location.isLive());
        FfmpegInput input = FfmpegInput.open(spec.streamId(), location, options);
        VideoDecoder decoder = null;
        try {
            decoder = VideoDecoder.open(spec.streamId(), input.videoStream(), spec.decoder(), gpuPresent,
                    options.decoder(), live, spec.gpuFrames());
            FfmpegFrameSource source = new FfmpegFrameSource(spec.streamId(), location,
                    live ? options.readTimeout() : null, input, decoder, spec.gpuFrames());
            source.logOpened(live);
            return source;
        } catch (IOException | RuntimeException e) {
            if (decoder != null) {
                decoder.close();
            }
            input.close();
            throw e;
        }
    }

    @Override
    public VideoFrame next() throws IOException {
        synchronized (lock) {
            if (closed) {
                throw new IOException(streamId + ": source is closed");
            }
            return decodeNext();
        }
    }

    private VideoFrame decodeNext() throws IOException {
        if (failure != null) {
            throw new IOException(failure);
        }
        while (!decoderDrained) {
            FfmpegLog.clearErrors();
            int result = avcodec_receive_frame(decoder.context(), frame);
            if (result >= 0) {
                consecutiveDecodeErrors = 0;
                try {
                    if (frame.decode_error_flags() != 0) {
                        countDecodeError("decoded with errors concealed (flags " + frame.decode_error_flags() + ")");
                    }
                    return toVideoFrame();
                } finally {
                    av_frame_unref(frame);
                }
            }
            if (result == AVERROR_EOF()) {
                decoderDrained = true;
                failure = endOfFileFailure();
            } else if (result == AVERROR_EAGAIN()) {
                feedDecoder();
            } else {
                decodeError(result);
            }
        }
        if (failure != null) {
            throw new IOException(failure);
        }
        return null;
    }

    /** Null when the source may end here: a live one, or a file that decoded what it declares. */
    private String endOfFileFailure() {
        if (isLive()) {
            return null;
        }
        String errors = decodeErrors == 0 ? "" : " (" + decodeErrors + " of " + packetsRead + " packets failed to decode)";
        if (declaredFrames > 0 && nextIndex * 100 < declaredFrames * MIN_DECLARED_FRAMES_PERCENT) {
            return streamId + ": " + location.redacted() + " ends after " + nextIndex + " of " + declaredFrames
                    + " frames the container declares" + errors;
        }
        if (packetsRead > 0 && (long) decodeErrors * 100 > packetsRead * MAX_CORRUPT_PACKETS_PERCENT) {
            return streamId + ": " + location.redacted() + ": " + decodeErrors + " of " + packetsRead
                    + " packets failed to decode (more than " + MAX_CORRUPT_PACKETS_PERCENT + " %)";
        }
        return null;
    }

    /** Reads the next packet of the video stream (or the end) and gives it to the decoder. */
    private void feedDecoder() throws IOException {
        if (inputEnded) {
            // The drain packet went in; the decoder must answer EOF now. EAGAIN again would loop forever.
            throw new IOException(streamId + ": decoder " + decoder.name() + " did not finish after the end of input");
        }
        if (!packetPending) {
            if (!input.read(packet, readTimeout)) {
                inputEnded = true;
                avcodec_send_packet(decoder.context(), null); // drain: the decoder gives up what it holds
                return;
            }
            packetPending = true;
            packetsRead++;
        }
        FfmpegLog.clearErrors();
        int result = avcodec_send_packet(decoder.context(), packet);
        if (result == AVERROR_EAGAIN()) {
            return; // decoder full: take a frame out first, then this packet again
        }
        packetPending = false;
        av_packet_unref(packet);
        if (result < 0) {
            decodeError(result);
        }
    }

    private void decodeError(int result) throws IOException {
        String reason = Ffmpeg.describe(result);
        if (result != AVERROR_INVALIDDATA() || ++consecutiveDecodeErrors > MAX_CONSECUTIVE_DECODE_ERRORS) {
            throw new IOException(streamId + ": decoding " + location.redacted() + " with " + decoder.name()
                    + " failed: " + reason);
        }
        countDecodeError("skipped: " + reason);
    }

    /** Counts a packet that failed to decode; a file with too many fails at once. */
    private void countDecodeError(String what) throws IOException {
        int errors = ++decodeErrors;
        LOG.warn("{}: a packet {} could not decode ({} so far): {}", streamId, decoder.name(), errors, what);
        if (!isLive() && errors > MAX_CORRUPT_PACKETS) {
            failure = streamId + ": " + location.redacted() + ": " + errors + " packets failed to decode (more than "
                    + MAX_CORRUPT_PACKETS + ")";
            throw new IOException(failure);
        }
    }

    private VideoFrame toVideoFrame() throws IOException {
        Instant capturedAt = Instant.now();
        long timestamp = frame.best_effort_timestamp();
        if (timestamp == AV_NOPTS_VALUE) {
            timestamp = frame.pts();
        }
        long ptsMillis;
        if (timestamp != AV_NOPTS_VALUE) {
            ptsMillis = av_rescale_q(timestamp, timeBase, MILLIS);
        } else {
            ptsMillis = lastPtsMillis == Long.MIN_VALUE ? 0 : lastPtsMillis + nominalFrameMillis;
        }
        lastPtsMillis = ptsMillis;
        if (frame.format() == AV_PIX_FMT_CUDA) {
            // NVDEC's frame in GPU memory: kept there (a reference on it), RGB only when a sink asks.
            return new VideoFrame(streamId, nextIndex++, ptsMillis, capturedAt, frame.width(), frame.height(), null,
                    DevicePicture.of(streamId, frame), null);
        }
        if (yuvPlanes && HostYuvPicture.takes(frame)) {
            // For a GPU backend: the planes as they came (half the bytes of RGB), converted on the GPU.
            return new VideoFrame(streamId, nextIndex++, ptsMillis, capturedAt, frame.width(), frame.height(), null,
                    null, HostYuvPicture.of(streamId, frame));
        }
        byte[] rgb = converter.toRgb(streamId, frame);
        return new VideoFrame(streamId, nextIndex++, ptsMillis, capturedAt, frame.width(), frame.height(), rgb);
    }

    @Override
    public boolean isLive() {
        return readTimeout != null;
    }

    @Override
    public String describe() {
        return description;
    }

    /** The FFmpeg decoder in use: "h264", "hevc_cuvid", ... */
    public String decoderName() {
        return decoder.name();
    }

    /**
     * Packets of this stream that failed to decode so far (rejected as invalid data or decoded only
     * with errors concealed); safe to read from any thread.
     */
    @Override
    public int decodeErrors() {
        return decodeErrors;
    }

    /** True when frames are decoded by NVDEC. */
    public boolean hardwareDecoding() {
        return decoder.hardware();
    }

    @Override
    public void close() {
        input.abort(); // a read blocked in another thread gives up within ~100 ms and releases the lock
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            av_packet_free(packet);
            av_frame_free(frame);
            decoder.close();
            converter.close();
            input.close();
        }
    }

    private void logOpened(boolean live) {
        AVStream stream = input.videoStream();
        LOG.info("{}: opened {} {} {}x{} ({}), decoder {} ({}: {})", streamId, location.redacted(),
                avcodec_get_name(stream.codecpar().codec_id()).getString(), stream.codecpar().width(),
                stream.codecpar().height(), live ? "live" : "file", decoder.name(),
                decoder.hardware() ? "NVDEC" : "cpu", decoder.why());
    }
}
