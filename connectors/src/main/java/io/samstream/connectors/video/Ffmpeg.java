package io.samstream.connectors.video;

import static org.bytedeco.ffmpeg.global.avcodec.avcodec_find_decoder_by_name;
import static org.bytedeco.ffmpeg.global.avcodec.avcodec_find_encoder_by_name;
import static org.bytedeco.ffmpeg.global.avformat.avformat_network_init;
import static org.bytedeco.ffmpeg.global.avutil.av_strerror;
import static org.bytedeco.ffmpeg.global.avutil.av_version_info;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.bytedeco.javacpp.Loader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bundled FFmpeg (JavaCPP presets, linux-x86_64 natives): loads it once, routes its log into
 * SLF4J and turns its error codes into words.
 *
 * <p>libavdevice (V4L2 capture) is loaded only when a camera is opened, by {@link #loadDevices()}:
 * the bundled build links it against the OS's PulseAudio, ALSA and XCB client libraries, which a
 * server may not have. Files and network streams need only libavformat, libavcodec and libswscale.
 */
public final class Ffmpeg {
    private static final Logger LOG = LoggerFactory.getLogger(Ffmpeg.class);

    private static volatile boolean loaded;
    private static volatile boolean devicesLoaded;
    private static Throwable loadFailure;

    private Ffmpeg() {
    }

    /**
     * Loads the FFmpeg libraries (the first call extracts them to JavaCPP's cache, ~/.javacpp/cache).
     *
     * @throws IOException naming the library that could not be loaded and why
     */
    public static void load() throws IOException {
        if (loaded) {
            return;
        }
        synchronized (Ffmpeg.class) {
            if (loaded) {
                return;
            }
            if (loadFailure == null) {
                try {
                    Loader.load(org.bytedeco.ffmpeg.global.avutil.class);
                    Loader.load(org.bytedeco.ffmpeg.global.avcodec.class);
                    Loader.load(org.bytedeco.ffmpeg.global.avformat.class);
                    Loader.load(org.bytedeco.ffmpeg.global.swscale.class);
                    FfmpegLog.install();
                    avformat_network_init();
                    loaded = true;
                    LOG.debug("FFmpeg {} loaded", version());
                    return;
                } catch (Throwable e) {
                    // A native library that failed once fails again: remember why, for every caller.
                    loadFailure = e;
                }
            }
            throw new IOException("FFmpeg natives could not be loaded: " + rootMessage(loadFailure), loadFailure);
        }
    }

    /**
     * Loads libavdevice and registers its input devices (video4linux2). Needs the OS libraries it
     * links: libpulse.so.0, libasound.so.2, libxcb.so.1 (Debian: libpulse0, libasound2, libxcb1).
     */
    static void loadDevices() throws IOException {
        load();
        if (devicesLoaded) {
            return;
        }
        synchronized (Ffmpeg.class) {
            if (devicesLoaded) {
                return;
            }
            try {
                Loader.load(org.bytedeco.ffmpeg.global.avdevice.class);
                org.bytedeco.ffmpeg.global.avdevice.avdevice_register_all();
                devicesLoaded = true;
            } catch (Throwable e) {
                throw new IOException("FFmpeg's libavdevice (needed for cameras) could not be loaded: " + rootMessage(e)
                        + "; it needs the OS libraries libpulse.so.0, libasound.so.2 and libxcb.so.1"
                        + " (Debian: apt-get install libpulse0 libasound2 libxcb1 libxcb-shm0)", e);
            }
        }
    }

    /** The FFmpeg version string, e.g. "7.1.1". */
    public static String version() throws IOException {
        load();
        return av_version_info().getString();
    }

    /** True when the bundled FFmpeg has an encoder of that name (e.g. "libopenh264", "mpeg4"). */
    public static boolean hasEncoder(String name) throws IOException {
        load();
        return avcodec_find_encoder_by_name(name) != null;
    }

    /** True when the bundled FFmpeg has a decoder of that name (e.g. "h264_cuvid"). */
    public static boolean hasDecoder(String name) throws IOException {
        load();
        return avcodec_find_decoder_by_name(name) != null;
    }

    /** Forgets the errors FFmpeg logged on this thread: call before an FFmpeg call whose failure you report. */
    public static void clearLoggedErrors() {
        FfmpegLog.clearErrors();
    }

    /**
     * FFmpeg's words for an error code, followed by the errors FFmpeg logged on this thread since
     * {@link #clearLoggedErrors()} (often the more telling part, e.g. "moov atom not found").
     */
    public static String describe(int errorCode) {
        byte[] text = new byte[256];
        String reason;
        if (av_strerror(errorCode, text, text.length) == 0) {
            int end = 0;
            while (end < text.length && text[end] != 0) {
                end++;
            }
            reason = new String(text, 0, end, StandardCharsets.UTF_8);
        } else {
            reason = "error " + errorCode;
        }
        String logged = FfmpegLog.takeErrors();
        return logged == null ? reason : reason + " (" + logged + ")";
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.toString() : root.getMessage();
    }
}
