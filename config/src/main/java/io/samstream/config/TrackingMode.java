package io.samstream.config;

import java.util.Locale;

/**
 * {@code samstream.tracking.mode}: how objects are followed from frame to frame.
 *
 * <ul>
 *   <li>{@link #AUTO}: by the model, memory for a SAM 2.1 checkpoint, concept for SAM 3, kalman for SAM;</li>
 *   <li>{@link #MEMORY}: SAM 2.1's memory of each object's earlier frames (needs a SAM 2.1 checkpoint);</li>
 *   <li>{@link #KALMAN}: SAM re-prompted with a Kalman-predicted box and the previous mask (needs SAM);</li>
 *   <li>{@link #CONCEPT}: SAM 3's concept tracking, every instance of each noun phrase (needs SAM 3).</li>
 * </ul>
 */
public enum TrackingMode {
    AUTO, MEMORY, KALMAN, CONCEPT;

    /** Parses auto / memory / kalman (any case); the error names {@code where} and the accepted values. */
    public static TrackingMode parse(String value, String where) {
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(where + ": unknown tracking mode '" + value + "' (expected auto, memory, kalman or concept)");
        }
    }

    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
