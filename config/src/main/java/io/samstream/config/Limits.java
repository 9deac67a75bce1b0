package io.samstream.config;

import java.util.List;

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
 * @param maxConceptsPerStream concepts (SAM 3 noun phrases) one stream may look for at once: configured and added
 *                             at run time (each costs a detector pass per detection frame)
 * @param maxConceptChars      the longest concept, in characters (the text encoder reads 32 tokens anyway)
 */
public record Limits(int maxObjectsPerStream, int maxPendingChanges, long maxPromptFrameAhead, int maxStateBytes,
        int maxPromptBytes, int maxDefinitionBytes, long maxStreamFrames, int maxConceptsPerStream,
        int maxConceptChars) {

    /** The keys' defaults, as reference.conf has them. */
    public static final Limits DEFAULTS = new Limits(256, 1000, 100_000, 900 * 1024, 64 * 1024, 256 * 1024,
            1_000_000_000_000L, 8, 200);

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
        check("max-concepts-per-stream", maxConceptsPerStream, 1, PromptSpec.MAX_CONCEPTS);
        check("max-concept-chars", maxConceptChars, 1, PromptSpec.MAX_CONCEPT_CHARS);
    }

    /** These limits with the concept bounds at their defaults. */
    public Limits(int maxObjectsPerStream, int maxPendingChanges, long maxPromptFrameAhead, int maxStateBytes,
            int maxPromptBytes, int maxDefinitionBytes, long maxStreamFrames) {
        this(maxObjectsPerStream, maxPendingChanges, maxPromptFrameAhead, maxStateBytes, maxPromptBytes,
                maxDefinitionBytes, maxStreamFrames, 8, 200);
    }

    private static void check(String key, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException("samstream.limits." + key + " must be " + min + " to " + max + ", got "
                    + value);
        }
    }

    /**
     * Checks a stream definition (the configuration file's or the streams topic's) against the limits: the
     * objects its prompts give (explicit ones and the grid's cells) at most {@link #maxObjectsPerStream}, its
     * concepts at most {@link #maxConceptsPerStream}, each at most {@link #maxConceptChars} long.
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
        List<String> concepts = spec.prompts().concepts();
        if (concepts.size() > maxConceptsPerStream) {
            return "stream " + spec.id() + ": prompts.concepts has " + concepts.size() + " concepts, more than"
                    + " samstream.limits.max-concepts-per-stream = " + maxConceptsPerStream;
        }
        for (String c : concepts) {
            String tooLong = checkConcept(c);
            if (tooLong != null) {
                return "stream " + spec.id() + ": prompts.concepts: " + tooLong;
            }
        }
        return null;
    }

    /** Null when a concept is short enough, else why not (naming the limit). */
    public String checkConcept(String concept) {
        if (concept.length() > maxConceptChars) {
            return "concept \"" + concept.substring(0, Math.min(40, concept.length())) + "...\" has "
                    + concept.length() + " characters, more than samstream.limits.max-concept-chars = "
                    + maxConceptChars;
        }
        return null;
    }
}
