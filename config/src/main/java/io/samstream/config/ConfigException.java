package io.samstream.config;

/**
 * A configuration that cannot be used. The message names the key at fault and what it should be, on
 * one line: control characters in it (a stream id or value from a streams-topic record) are escaped.
 */
public final class ConfigException extends RuntimeException {
    public ConfigException(String message) {
        super(OneLine.of(message));
    }

    public ConfigException(String message, Throwable cause) {
        super(OneLine.of(message), cause);
    }
}
