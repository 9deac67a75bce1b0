package io.samstream.config;

import java.util.Locale;

/** Where the model runs. */
public enum Device {
    /** CUDA when a usable GPU is present, otherwise the CPU; the choice is logged. */
    AUTO,
    CPU,
    /** CUDA or nothing: fails at start when no usable GPU is present. */
    CUDA;

    /** Parses auto / cpu / cuda (any case); the error lists the accepted values. */
    public static Device parse(String value, String where) {
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(where + ": unknown device '" + value + "' (expected auto, cpu or cuda)");
        }
    }
}
