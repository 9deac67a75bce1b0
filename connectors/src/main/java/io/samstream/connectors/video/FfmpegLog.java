package io.samstream.connectors.video;

import io.samstream.config.SafeText;

import static org.bytedeco.ffmpeg.global.avutil.AV_LOG_DEBUG;
import static org.bytedeco.ffmpeg.global.avutil.AV_LOG_ERROR;
import static org.bytedeco.ffmpeg.global.avutil.AV_LOG_VERBOSE;
import static org.bytedeco.ffmpeg.global.avutil.AV_LOG_WARNING;
import static org.bytedeco.ffmpeg.global.avutil.av_log_set_level;
import static org.bytedeco.ffmpeg.global.avutil.setLogCallback;

import java.util.regex.Pattern;

import org.bytedeco.ffmpeg.avutil.LogCallback;
import org.bytedeco.javacpp.BytePointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * FFmpeg's log, routed into SLF4J (logger {@code io.samstream.connectors.video.FfmpegLog}) instead of
 * stderr. FFmpeg errors become WARN (the caller decides what is fatal), warnings INFO, the rest
 * DEBUG/TRACE; FFmpeg is told to format only what SLF4J will show.
 *
 * <p>The first and the last error logged on each thread are kept, so that an exception can carry
 * FFmpeg's own explanation ("moov atom not found"; "Cannot load libnvcuvid.so.1; Failed loading
 * nvcuvid.") next to the bare error code: the first is usually the cause, the last the consequence.
 * May be called from FFmpeg's own threads (frame-threaded decoders); never throws.
 */
final class FfmpegLog extends LogCallback {
    private static final Logger LOG = LoggerFactory.getLogger(FfmpegLog.class);
    /** "[h264 @ 0x55d1c0]" becomes "[h264]": addresses mean nothing in our logs. */
    private static final Pattern CONTEXT_ADDRESS = Pattern.compile(" @ 0x[0-9a-fA-F]+\\]");
    /** [first, last] error logged on this thread since the last clear. */
    private static final ThreadLocal<String[]> ERRORS = new ThreadLocal<>();
    /** Held for the life of the JVM: FFmpeg keeps calling it. */
    private static final FfmpegLog INSTANCE = new FfmpegLog();

    private FfmpegLog() {
    }

    static void install() {
        av_log_set_level(ffmpegLevelFor(LOG));
        setLogCallback(INSTANCE);
    }

    /** Forgets the errors logged on this thread; call before an FFmpeg call whose failure you report. */
    static void clearErrors() {
        ERRORS.remove();
    }

    /**
     * The errors FFmpeg logged on this thread since {@link #clearErrors()}: the first, and the last
     * if it differs, joined by "; "; null if none. Clears them.
     */
    static String takeErrors() {
        String[] errors = ERRORS.get();
        ERRORS.remove();
        if (errors == null) {
            return null;
        }
        return errors[1] == null || errors[1].equals(errors[0]) ? errors[0] : errors[0] + "; " + errors[1];
    }

    @Override
    public void call(int level, BytePointer message) {
        try {
            // FFmpeg quotes URLs (with their credentials) and bytes of the input: masked, escaped and cut.
            String text = SafeText.of(CONTEXT_ADDRESS.matcher(message.getString().strip()).replaceAll("]"), 1000);
            if (text.isEmpty()) {
                return;
            }
            if (level <= AV_LOG_ERROR) {
                String[] errors = ERRORS.get();
                if (errors == null) {
                    ERRORS.set(new String[] {text, null});
                } else {
                    errors[1] = text;
                }
                LOG.warn(text);
            } else if (level <= AV_LOG_WARNING) {
                LOG.info(text);
            } else if (level <= AV_LOG_VERBOSE) {
                LOG.debug(text);
            } else {
                LOG.trace(text);
            }
        } catch (RuntimeException e) {
            // Never let an exception unwind into native code.
        }
    }

    /** The most verbose FFmpeg level worth formatting; errors always, they feed the exceptions. */
    private static int ffmpegLevelFor(Logger log) {
        if (log.isTraceEnabled()) {
            return AV_LOG_DEBUG;
        }
        if (log.isDebugEnabled()) {
            return AV_LOG_VERBOSE;
        }
        if (log.isInfoEnabled()) {
            return AV_LOG_WARNING;
        }
        return AV_LOG_ERROR;
    }
}
