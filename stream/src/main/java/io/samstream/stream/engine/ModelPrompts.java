package io.samstream.stream.engine;

import io.samstream.config.PromptSpec;
import io.samstream.config.StreamSpec;
import io.samstream.stream.track.StreamTracker;

/**
 * Which prompts a stream's model takes: SAM 3 finds objects by concepts and takes no point or box prompts of
 * objects; SAM and SAM 2.1 take those and no concepts. A definition or a prompt op of the other kind is refused with
 * the reason, before anything of it applies.
 */
final class ModelPrompts {
    private ModelPrompts() {}

    /**
     * Null when the definition's prompts fit a model that finds objects by {@code concepts} (SAM 3) or not, else why
     * not (naming the stream and the key).
     */
    static String misfit(StreamSpec spec, boolean concepts) {
        PromptSpec p = spec.prompts();
        if (concepts && (!p.objects().isEmpty() || p.grid() > 0)) {
            return "stream " + spec.id() + ": prompts." + (p.objects().isEmpty() ? "grid" : "objects")
                    + ": a SAM 3 checkpoint finds objects by prompts.concepts, not by points, boxes or a grid";
        }
        if (!concepts && p.conceptsEveryFrames() > 0) {
            return "stream " + spec.id() + ": prompts.concepts-every-frames needs a SAM 3 checkpoint (sam3.pt); this"
                    + " engine's model takes points, boxes or a grid";
        }
        if (!concepts && !p.concepts().isEmpty()) {
            return "stream " + spec.id() + ": prompts.concepts needs a SAM 3 checkpoint (sam3.pt); this engine's"
                    + " model takes points, boxes or a grid";
        }
        return null;
    }

    /** Refuses an op the stream's model cannot take. */
    static void check(String stream, PromptMessage m, StreamTracker tracker) throws PromptRejected {
        boolean objectOp = m.op() == PromptMessage.Op.ADD || m.op() == PromptMessage.Op.UPDATE;
        if (m.op().isConcept() && !tracker.findsConcepts()) {
            throw new PromptRejected(PromptRejected.WRONG_MODEL, "stream " + stream + ": " + m.op().wireName()
                    + " needs a SAM 3 checkpoint (sam3.pt); this engine's model takes points and boxes of objects");
        }
        if (objectOp && tracker.findsConcepts()) {
            throw new PromptRejected(PromptRejected.WRONG_MODEL, "stream " + stream + ": " + m.op().wireName()
                    + " of an object: a SAM 3 checkpoint finds objects by concepts (op concept, with exemplar boxes"
                    + " if need be), not by points or a box");
        }
    }
}
