package io.samstream.stream.engine;

import io.samstream.config.Limits;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Keeps each stream's state record within {@code samstream.limits.max-state-bytes}: a prompt change is checked
 * before it applies ({@link #check}) against the stream's last state written plus the changes since, each counted
 * at its JSON's size uncompressed (an upper bound of what it adds to the compressed record), so that the state is
 * always written ({@link PromptRejected#STATE_TOO_LARGE} otherwise). The member thread checks, the engine's and
 * the member's state writes report ({@link #written}).
 */
final class StateBudget {
    private final Limits limits;
    /** Per stream: the bytes of its last state written, and the estimated growth since (prompt changes). */
    private final Map<String, Long> bytes = new ConcurrentHashMap<>();
    private final Map<String, Long> growth = new ConcurrentHashMap<>();
    /** What the change last checked adds, counted once it is applied ({@link #accepted}); the member thread's. */
    private String reservedFor;
    private long reserved;

    StateBudget(Limits limits) {
        this.limits = limits;
    }

    /** Rejects a change that could make its stream's state larger than max-state-bytes (before it is applied). */
    void check(PromptMessage m) throws PromptRejected {
        int points = m.prompt() == null || m.prompt().points() == null ? 0 : m.prompt().points().length;
        long adds = m.prompt() == null ? 64 : 96L + 3L * 24 * points + 4L * 24;
        long now = bytes.getOrDefault(m.stream(), 0L) + growth.getOrDefault(m.stream(), 0L);
        if (now + adds > limits.maxStateBytes()) {
            throw new PromptRejected(PromptRejected.STATE_TOO_LARGE, "stream " + LogSafe.of(m.stream()) + ": its state"
                    + " would grow to about " + (now + adds) + " bytes, more than samstream.limits.max-state-bytes = "
                    + limits.maxStateBytes() + " (remove objects or wait for pending changes to apply)");
        }
        reservedFor = m.stream();
        reserved = adds;
    }

    /** The change last checked was applied: it counts from now on (a rejected one never does). */
    void accepted(String stream) {
        if (stream.equals(reservedFor)) {
            growth.merge(stream, reserved, Long::sum);
        }
        reservedFor = null;
    }

    /** A state of {@code size} bytes was written for {@code stream}: the changes so far are in it. */
    void written(String stream, int size) {
        bytes.put(stream, (long) size);
        growth.remove(stream);
    }

    void forget(String stream) {
        bytes.remove(stream);
        growth.remove(stream);
    }

    /** Keeps the streams {@code kept} accepts (those still here after a rebalance). */
    void retain(Predicate<String> kept) {
        bytes.keySet().removeIf(kept.negate());
        growth.keySet().removeIf(kept.negate());
    }
}
