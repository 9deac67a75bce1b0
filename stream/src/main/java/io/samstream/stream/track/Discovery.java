package io.samstream.stream.track;

import io.samstream.config.Limits;

/**
 * Automatic discovery of new objects: what finds them, every how many frames (key frames, from the first), how
 * much of a found mask live objects may cover for it still to be new, and how many objects a stream may hold at
 * most ({@code samstream.limits.max-objects-per-stream}): discovery adds none past it, so a busy scene bounds its
 * own stream's work (issue #31).
 */
public record Discovery(ObjectDiscovery finder, int interval, double newObjectMaxOverlap, int maxObjects) {
    public Discovery {
        if (maxObjects < 1) {
            throw new IllegalArgumentException("maxObjects must be at least 1, was " + maxObjects);
        }
    }

    /** With the default limit ({@link Limits#DEFAULTS}). */
    public Discovery(ObjectDiscovery finder, int interval, double newObjectMaxOverlap) {
        this(finder, interval, newObjectMaxOverlap, Limits.DEFAULTS.maxObjectsPerStream());
    }
}
