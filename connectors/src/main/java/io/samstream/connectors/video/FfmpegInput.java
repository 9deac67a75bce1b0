package io.samstream.connectors.video;

import static org.bytedeco.ffmpeg.global.avcodec.AVDISCARD_ALL;
import static org.bytedeco.ffmpeg.global.avcodec.av_packet_unref;
import static org.bytedeco.ffmpeg.global.avformat.AVFMT_DURATION_FROM_BITRATE;
import static org.bytedeco.ffmpeg.global.avformat.av_find_best_stream;
import static org.bytedeco.ffmpeg.global.avformat.av_find_input_format;
import static org.bytedeco.ffmpeg.global.avformat.av_read_frame;
import static org.bytedeco.ffmpeg.global.avformat.avformat_alloc_context;
import static org.bytedeco.ffmpeg.global.avformat.avformat_close_input;
import static org.bytedeco.ffmpeg.global.avformat.avformat_find_stream_info;
import static org.bytedeco.ffmpeg.global.avformat.avformat_free_context;
import static org.bytedeco.ffmpeg.global.avformat.avformat_open_input;
import static org.bytedeco.ffmpeg.global.avutil.AVERROR_EAGAIN;
import static org.bytedeco.ffmpeg.global.avutil.AVERROR_EOF;
import static org.bytedeco.ffmpeg.global.avutil.AVERROR_EXIT;
import static org.bytedeco.ffmpeg.global.avutil.AVMEDIA_TYPE_VIDEO;
import static org.bytedeco.ffmpeg.global.avutil.AV_NOPTS_VALUE;
import static org.bytedeco.ffmpeg.global.avutil.av_dict_free;
import static org.bytedeco.ffmpeg.global.avutil.av_dict_get;
import static org.bytedeco.ffmpeg.global.avutil.av_dict_set;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bytedeco.ffmpeg.avcodec.AVCodec;
import org.bytedeco.ffmpeg.avcodec.AVPacket;
import org.bytedeco.ffmpeg.avformat.AVFormatContext;
import org.bytedeco.ffmpeg.avformat.AVInputFormat;
import org.bytedeco.ffmpeg.avformat.AVStream;
import org.bytedeco.ffmpeg.avutil.AVDictionary;
import org.bytedeco.ffmpeg.avutil.AVRational;
import org.bytedeco.javacpp.PointerPointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One opened FFmpeg input (protocol + demuxer) and the video stream chosen in it: opens with the
 * options and timeouts, reads that stream's packets, can be aborted from another thread.
 *
 * <p>Network inputs get defaults so that a dead stream fails instead of hanging: {@code rw_timeout}
 * (every protocol), and for RTSP {@code rtsp_transport=tcp} and its socket {@code timeout}; the
 * caller's options win. An {@link IoWatchdog} backs them: it interrupts an open and probe that take
 * longer than the open timeout, and a read that waits longer than the read timeout.
 */
final class FfmpegInput implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FfmpegInput.class);
    /** The socket-level timeout given to network protocols: below the read timeout, so FFmpeg says why first. */
    static final Duration IO_TIMEOUT = Duration.ofSeconds(10);

    private final String streamId;
    private final SourceLocation location;
    private final IoWatchdog watchdog;
    private AVFormatContext format;
    private final int streamIndex;

    private FfmpegInput(String streamId, SourceLocation location, IoWatchdog watchdog, AVFormatContext format,
            int streamIndex) {
        this.streamId = streamId;
        this.location = location;
        this.watchdog = watchdog;
        this.format = format;
        this.streamIndex = streamIndex;
    }

    /**
     * Opens the input, probes it and picks its best video stream; every other stream is discarded
     * (not even demuxed). FFmpeg must be loaded.
     */
    static FfmpegInput open(String streamId, SourceLocation location, SourceOptions options) throws IOException {
        String where = streamId + ": cannot open " + location.redacted() + ": ";
        IoWatchdog watchdog = new IoWatchdog();
        AVFormatContext format = avformat_alloc_context();
        boolean opened = false;
        try {
            if (format == null) {
                throw new IOException(where + "out of memory");
            }
            watchdog.attachTo(format);
            AVInputFormat inputFormat = null;
            String formatName = options.format() != null ? options.format() : location.inputFormat();
            if (formatName != null && (inputFormat = av_find_input_format(formatName)) == null) {
                throw new IOException(where + "this FFmpeg build has no input format \"" + formatName + "\"");
            }

            watchdog.arm(options.openTimeout());
            int result = openInput(streamId, format, location, inputFormat, options.input());
            if (result < 0) {
                format = null; // avformat_open_input frees a context it fails with
                throw new IOException(where + failure(result, watchdog, "opening"));
            }
            opened = true;
            // A damaged file may open "successfully" after FFmpeg logged why it is damaged: keep that.
            String openErrors = FfmpegLog.takeErrors();
            result = avformat_find_stream_info(format, (PointerPointer<?>) null);
            watchdog.disarm();
            if (result < 0) {
                throw new IOException(where + "no stream information: " + failure(result, watchdog, "probing"));
            }
            String probeErrors = FfmpegLog.takeErrors();
            int streamIndex = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, (AVCodec) null, 0);
            if (streamIndex < 0) {
                String logged = probeErrors != null ? probeErrors : openErrors;
                throw new IOException(where + "no decodable video stream in it" + (logged == null ? "" : " (" + logged + ")"));
            }
            for (int i = 0; i < format.nb_streams(); i++) {
                if (i != streamIndex) {
                    format.streams(i).discard(AVDISCARD_ALL);
                }
            }
            return new FfmpegInput(streamId, location, watchdog, format, streamIndex);
        } catch (IOException | RuntimeException e) {
            if (format != null) {
                if (opened) {
                    avformat_close_input(format);
                } else {
                    avformat_free_context(format);
                }
            }
            watchdog.close();
            throw e;
        }
    }

    private static int openInput(String streamId, AVFormatContext format, SourceLocation location,
            AVInputFormat inputFormat, Map<String, String> given) {
        Map<String, String> options = new LinkedHashMap<>(networkDefaults(location));
        options.putAll(given);
        AVDictionary dictionary = new AVDictionary(null);
        try {
            options.forEach((key, value) -> av_dict_set(dictionary, key, value, 0));
            FfmpegLog.clearErrors();
            int result = avformat_open_input(format, location.ffmpegUrl(), inputFormat, dictionary);
            if (result >= 0) {
                warnUnused(streamId, dictionary, given.keySet());
            }
            return result;
        } finally {
            av_dict_free(dictionary);
        }
    }

    AVStream videoStream() {
        return format.streams(streamIndex);
    }

    /**
     * How many frames the container declares for the video stream: the smaller of its frame count
     * (nb_frames) and its duration times its frame rate (the lower of the average and the base rate),
     * where it has both; the smallest claim, since an AVI with a fine time base counts nb_frames (and
     * so the average rate) in ticks, not frames, and claims far too many; 0
     * when it declares neither, and the duration is not used when FFmpeg only guessed it from the
     * bitrate (a guess, not a declaration).
     */
    long declaredFrames() {
        AVStream stream = videoStream();
        long counted = Math.max(0, stream.nb_frames());
        long timed = 0;
        double rate = Math.min(framesPerSecond(stream.avg_frame_rate()), framesPerSecond(stream.r_frame_rate()));
        if (rate < Double.MAX_VALUE && format.duration_estimation_method() != AVFMT_DURATION_FROM_BITRATE) {
            double seconds = 0;
            if (stream.duration() != AV_NOPTS_VALUE && stream.duration() > 0 && stream.time_base().den() > 0) {
                seconds = (double) stream.duration() * stream.time_base().num() / stream.time_base().den();
            } else if (format.duration() != AV_NOPTS_VALUE && format.duration() > 0) {
                seconds = format.duration() / 1_000_000.0; // AV_TIME_BASE
            }
            timed = Math.round(seconds * rate);
        }
        if (counted > 0 && timed > 0) {
            return Math.min(counted, timed);
        }
        return Math.max(counted, timed);
    }

    /** The rate, or Double.MAX_VALUE when unknown (so that min() takes the other). */
    private static double framesPerSecond(AVRational rate) {
        return rate.num() > 0 && rate.den() > 0 ? (double) rate.num() / rate.den() : Double.MAX_VALUE;
    }

    /**
     * Reads the next packet of the video stream into {@code packet} (which the caller unrefs).
     *
     * @param timeout the longest wait for data, or null to wait as long as FFmpeg does
     * @return false at the end of the input
     */
    boolean read(AVPacket packet, Duration timeout) throws IOException {
        while (true) {
            if (timeout != null) {
                watchdog.arm(timeout);
            }
            FfmpegLog.clearErrors();
            int result = av_read_frame(format, packet);
            watchdog.disarm();
            if (result == AVERROR_EOF()) {
                return false;
            }
            if (result == AVERROR_EAGAIN()) {
                pauseBeforeRetry(); // a device opened non-blocking has no frame yet
                continue;
            }
            if (result < 0) {
                throw new IOException(streamId + ": reading " + location.redacted() + " failed: "
                        + failure(result, watchdog, "waiting for data"));
            }
            if (packet.stream_index() == streamIndex) {
                return true;
            }
            av_packet_unref(packet);
        }
    }

    /** Makes a blocked or later open or read give up at once; safe from any thread. */
    void abort() {
        watchdog.abort();
    }

    @Override
    public void close() {
        if (format != null) {
            avformat_close_input(format);
            format = null;
            watchdog.close();
        }
    }

    private void pauseBeforeRetry() throws IOException {
        try {
            Thread.sleep(5);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(streamId + ": interrupted while waiting for " + location.redacted());
        }
        if (watchdog.aborted()) {
            throw new IOException(streamId + ": reading " + location.redacted() + " failed: closed");
        }
    }

    private static String failure(int result, IoWatchdog watchdog, String doing) {
        if (result == AVERROR_EXIT()) {
            FfmpegLog.takeErrors();
            if (watchdog.aborted()) {
                return "closed";
            }
            if (watchdog.firedAfter() != null) {
                return "timed out after " + watchdog.firedAfter().toMillis() + " ms " + doing;
            }
        }
        return Ffmpeg.describe(result);
    }

    /** Options so that a dead network stream fails rather than hangs; FFmpeg wants microseconds. */
    private static Map<String, String> networkDefaults(SourceLocation location) {
        if (location.kind() != SourceLocation.Kind.NETWORK) {
            return Map.of();
        }
        String micros = Long.toString(IO_TIMEOUT.toNanos() / 1000);
        if (location.scheme().equals("rtsp") || location.scheme().equals("rtsps")) {
            // TCP: UDP loses packets on busy networks and does not cross NAT. "timeout" is RTSP's socket
            // I/O timeout (called stimeout before FFmpeg 5).
            return Map.of("rtsp_transport", "tcp", "timeout", micros);
        }
        return Map.of("rw_timeout", micros);
    }

    private static void warnUnused(String streamId, AVDictionary left, Iterable<String> given) {
        List<String> unused = new ArrayList<>();
        for (String key : given) {
            if (av_dict_get(left, key, null, 0) != null) {
                unused.add(key);
            }
        }
        if (!unused.isEmpty()) {
            LOG.warn("{}: FFmpeg did not use the input option(s) {}: misspelt, or for another protocol or format?",
                    streamId, unused);
        }
    }
}
