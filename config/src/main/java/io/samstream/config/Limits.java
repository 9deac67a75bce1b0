package io.samstream.config;

/**
 * The validated {@code samstream.limits} section: the one set of bounds the whole control plane (the
 * configuration file, the streams, prompts and state topics, the HTTP API) is held to. A record that would
 * pass one of them is rejected for its stream alone with the limit's name in its reason; nothing is cut
 * silently. See docs/limits.md for where each one is enforced.
 *
 * @param maxObjectsPerStream  objects one stream may have at once: prompted (configured, grid cells, added at
 *                             run time) and discovered alike, and the tracks a state record may bring
 * @param maxPendingChanges    prompt snapshots one stream keeps: the one in force and the changes waiting for
 *                             their frame (deferred changes count like any other)
 * @param maxPromptFrameAhead  how far past a stream's next frame a prompt's {@code "frame"} may lie
 * @param maxStateBytes        the largest state-topic record value (compressed); a change that would make a
 *                             stream's state larger is rejected
 * @param maxPromptBytes       the largest prompts-topic message value read
 * @param maxDefinitionBytes   the largest streams-topic record value read
 * @param maxStreamFrames      the highest frame number any record may name (a bound on every stream's length;
 *                             a file's own length bounds its state's frame once it is read)
 */
public record Limits(int maxObjectsPerStream, int maxPendingChanges, long maxPromptFrameAhead, int maxStateBytes,
        int maxPromptBytes, int maxDefinitionBytes, long maxStreamFrames) {

    /** The keys' defaults, as reference.conf has them. */
    public static final Limits DEFAULTS = new Limits(256, 1000, 100_000, 900 * 1024, 64 * 1024, 256 * 1024,
            1_000_000_000_000L);

    /** What Kafka accepts by default (the brokers' message.max.bytes, the producers' max.request.size). */
    public static final int KAFKA_RECORD_BYTES = 1024 * 1024;

    public Limits {
        check("max-objects-per-stream", maxObjectsPerStream, 1, 100_000);
        check("max-pending-changes", maxPendingChanges, 1, 1_000_000);
        check("max-prompt-frame-ahead", maxPromptFrameAhead, 0, 1L << 40);
        // Below Kafka's own record limit, with room for the key, headers and the batch's framing.
        check("max-state-bytes", maxStateBytes, 1024, KAFKA_RECORD_BYTES - 16 * 1024);
        check("max-prompt-bytes", maxPromptBytes, 256, KAFKA_RECORD_BYTES - 16 * 1024);
        check("max-definition-bytes", maxDefinitionBytes, 256, KAFKA_RECORD_BYTES - 16 * 1024);
        check("max-stream-frames", maxStreamFrames, 1, 1L << 53);
    }

    private static void check(String key, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException("samstream.limits." + key + " must be " + min + " to " + max + ", got "
                    + value);
        }
    }

    /**
     * Checks a stream definition (the configuration file's or the streams topic's) against the limits: the
     * objects its prompts give (explicit ones and the grid's cells) at most {@link #maxObjectsPerStream}.
     *
     * @return null when it fits, else why not (naming the stream, the count and the limit)
     */
    public String check(StreamSpec spec) {
        long objects = (long) spec.prompts().objects().size() + (long) spec.prompts().grid() * spec.prompts().grid();
        if (objects > maxObjectsPerStream) {
            return "stream " + spec.id() + " has " + objects + " objects (" + spec.prompts().objects().size()
                    + " given, " + spec.prompts().grid() * spec.prompts().grid() + " of the grid), more than"
                    + " samstream.limits.max-objects-per-stream = " + maxObjectsPerStream;
        }
        return null;
    }
}
