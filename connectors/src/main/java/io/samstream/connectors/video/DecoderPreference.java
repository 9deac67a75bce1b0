package io.samstream.connectors.video;

import java.util.Locale;

/**
 * Which decoder a stream should use.
 *
 * <ul>
 *   <li>{@link #AUTO}: NVDEC ({@code h264_cuvid}, {@code hevc_cuvid}) for H.264 and HEVC when an
 *       NVIDIA GPU is present, else, or when NVDEC cannot be opened, FFmpeg's CPU decoder; the choice
 *       and its reason are logged once per stream.</li>
 *   <li>{@link #NVDEC}: NVDEC or an error saying why not (no GPU, a codec NVDEC is not used for here,
 *       the driver refused).</li>
 *   <li>{@link #CPU}: FFmpeg's software decoder; never touches the GPU.</li>
 * </ul>
 */
public enum DecoderPreference {
    AUTO, NVDEC, CPU;

    /** "auto", "nvdec" or "cpu", in any case. */
    public static DecoderPreference parse(String text) {
        try {
            return valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("decoder must be auto, nvdec or cpu, got \"" + text + "\"");
        }
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
