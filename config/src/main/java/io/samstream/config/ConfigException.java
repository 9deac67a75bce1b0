package io.samstream.config;

/** A configuration that cannot be used. The message names the key at fault and what it should be. */
public final class ConfigException extends RuntimeException {
    public ConfigException(String message) {
        super(message);
    }

    public ConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
