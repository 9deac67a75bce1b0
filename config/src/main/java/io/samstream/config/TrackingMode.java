package io.samstream.config;

import java.util.Locale;

/**
 * {@code samstream.tracking.mode}: how objects are followed from frame to frame.
 *
 * <ul>
 *   <li>{@link #AUTO}: by the model, memory for a SAM 2.1 checkpoint, kalman for SAM;</li>
 *   <li>{@link #MEMORY}: SAM 2.1's memory of each object's earlier frames (needs a SAM 2.1 checkpoint);</li>
 *   <li>{@link #KALMAN}: SAM re-prompted with a Kalman-predicted box and the previous mask (needs SAM).</li>
 * </ul>
 */
public enum TrackingMode {
    AUTO, MEMORY, KALMAN;

    /** Parses auto / memory / kalman (any case); the error names {@code where} and the accepted values. */
    public static TrackingMode parse(String value, String where) {
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(where + ": unknown tracking mode '" + value + "' (expected auto, memory or kalman)");
        }
    }

    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
