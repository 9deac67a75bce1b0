package io.samstream.stream.engine;

import io.samstream.config.Limits;
import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.stream.track.ConceptPrompt;
import io.samstream.stream.track.TrackPrompts;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One stream's prompts at run time: its configured prompts plus the changes of the prompts topic.
 * Every change makes a new immutable {@link Snapshot} that applies from a frame number on; the decoder
 * asks for the snapshot of the frame it decodes ({@link #forFrame}), so each frame sees one consistent
 * set of objects and frames decoded concurrently each get the right one. Changes are validated against
 * the newest snapshot, in the order they arrive. A snapshot is stored as its one change on the previous
 * one until a frame needs its objects (so a pending change costs its own size, not a copy of every
 * object). The stream's limits ({@code samstream.limits}) hold: at most {@code max-pending-changes} changes wait
 * for their frame, a change merged into a pending snapshot (deferred behind it) counting like any other
 * ({@link PromptRejected#TOO_MANY_PENDING}); a {@code "frame"} at most {@code max-prompt-frame-ahead} past the next
 * frame ({@link PromptRejected#FRAME_TOO_FAR}); at most {@code max-objects-per-stream} objects
 * ({@link PromptRejected#OBJECT_LIMIT}); at most {@code max-concepts-per-stream} concepts, each at most {@code
 * max-concept-chars} long ({@link PromptRejected#CONCEPT_LIMIT}, {@link PromptRejected#BAD_CONCEPT}).
 */
final class StreamPrompts {
    private static final Logger log = LoggerFactory.getLogger(StreamPrompts.class);
    /** The default of samstream.limits.max-pending-changes. */
    static final int MAX_PENDING = Limits.DEFAULTS.maxPendingChanges();

    /** A snapshot, the first frame it applies to and the changes it holds since the entry before it. */
    private record Entry(long fromFrame, Snapshot snapshot, int changes) {}

    private final String stream;
    private final Limits limits;
    private final PromptSpec configuredSpec;
    private final Snapshot configured;
    /** Numbers the changes (revisions of objects, generations of resets); 0 is the configured start. */
    private long changes;
    /** Ordered by fromFrame; the first applies from frame 0. Replaced, never modified. */
    private volatile List<Entry> entries;
    /** The first frame whose prompts the decoder has not taken yet ({@link #take}): "now" for a change. */
    private long decodeNext;

    StreamPrompts(String stream, PromptSpec configured) {
        this(stream, configured, Limits.DEFAULTS);
    }

    StreamPrompts(String stream, PromptSpec configured, Limits limits) {
        this.stream = stream;
        this.limits = limits;
        this.configuredSpec = configured;
        this.configured = new Snapshot(stream, configured, 0);
        this.entries = List.of(new Entry(0, this.configured, 0));
    }

    /** The prompts of frame {@code index}. */
    Snapshot forFrame(long index) {
        List<Entry> e = entries;
        for (int i = e.size() - 1; i > 0; i--) {
            if (e.get(i).fromFrame() <= index) {
                return e.get(i).snapshot();
            }
        }
        return e.get(0).snapshot();
    }

    /**
     * The prompts of frame {@code index}, for decoding it: from now on a change applies to later frames only
     * (frames are taken in order). Taking and changing are atomic with each other, so a change made while
     * frames wait in the pipeline applies from the first of them the decoder has not reached.
     */
    synchronized Snapshot take(long index) {
        decodeNext = Math.max(decodeNext, index + 1);
        return forFrame(index);
    }

    /** The first frame not yet taken for decoding. */
    synchronized long decodeNext() {
        return decodeNext;
    }

    /**
     * Applies one change from the first frame not yet taken for decoding, or from the message's frame when
     * that is later (see {@link #apply(PromptMessage, long, int, int, IntPredicate)}).
     */
    synchronized long applyNow(PromptMessage m, int width, int height, IntPredicate discoveredLive)
            throws PromptRejected {
        return apply(m, decodeNext, width, height, discoveredLive);
    }

    /** The newest snapshot (what the next change is checked against). */
    Snapshot latest() {
        List<Entry> e = entries;
        return e.get(e.size() - 1).snapshot();
    }

    /**
     * Applies one change.
     *
     * @param nextFrame the number the stream's next frame gets ("now")
     * @param width     the stream's frame width, 0 when no frame was seen yet (then nothing is checked)
     * @return the frame it applies from
     * @throws PromptRejected for an id that exists already (add) or does not exist (update, remove), or a
     *                        prompt outside the frame
     */
    synchronized long apply(PromptMessage m, long nextFrame, int width, int height) throws PromptRejected {
        return apply(m, nextFrame, width, height, id -> false);
    }

    /**
     * Applies one change; {@code discoveredLive} tells whether a discovered object (the tracker's) is tracked
     * now, for a remove of a discovered id.
     */
    synchronized long apply(PromptMessage m, long nextFrame, int width, int height, IntPredicate discoveredLive)
            throws PromptRejected {
        Snapshot base = latest();
        long revision = changes + 1;
        List<Entry> e = entries;
        long last = e.get(e.size() - 1).fromFrame();
        long asked = m.frame().orElse(nextFrame);
        if (asked > nextFrame + limits.maxPromptFrameAhead() || asked > limits.maxStreamFrames()) {
            throw new PromptRejected(PromptRejected.FRAME_TOO_FAR, "stream " + stream + ": frame " + asked + " is more"
                    + " than samstream.limits.max-prompt-frame-ahead = " + limits.maxPromptFrameAhead()
                    + " frames after the next one (" + nextFrame + ")");
        }
        // Changes apply in the order they arrive: one built on a later pending change cannot come first.
        long from = Math.max(asked, Math.max(nextFrame, last));
        int pending = pending(e, nextFrame);
        if (pending >= limits.maxPendingChanges()) {
            throw new PromptRejected(PromptRejected.TOO_MANY_PENDING, "stream " + stream + ": " + pending
                    + " prompt changes are pending already (the last from frame " + last + "), at most "
                    + limits.maxPendingChanges() + " (samstream.limits.max-pending-changes); a change for frame "
                    + from + " waits for those frames to be decoded");
        }
        Snapshot next = switch (m.op()) {
            case CONCEPT -> withConcept(base, m.concept(), width, height);
            case REMOVE_CONCEPT -> {
                if (!base.hasConcept(m.concept().text())) {
                    throw new PromptRejected(PromptRejected.UNKNOWN_CONCEPT, "stream " + stream + ": no concept \""
                            + LogSafe.of(m.concept().text()) + "\" to remove (it looks for " + base.conceptTexts() + ")");
                }
                yield base.withoutConcept(m.concept().text());
            }
            // A new generation: tracking starts over from the configured objects.
            case RESET -> new Snapshot(stream, configuredSpec, revision);
            case ADD -> {
                if (base.contains(m.object())) {
                    throw new PromptRejected(PromptRejected.OBJECT_EXISTS, "stream " + stream + ": object "
                            + m.object() + " exists already (update it, or remove it first)");
                }
                int objects = base.ids().size();
                if (objects >= limits.maxObjectsPerStream()) {
                    throw new PromptRejected(PromptRejected.OBJECT_LIMIT, "stream " + stream + " has " + objects
                            + " objects, samstream.limits.max-objects-per-stream = " + limits.maxObjectsPerStream()
                            + " (remove one first)");
                }
                yield base.with(m.prompt(), revision, width, height);
            }
            case UPDATE -> {
                if (!base.contains(m.object())) {
                    throw new PromptRejected(PromptRejected.UNKNOWN_OBJECT, "stream " + stream + ": no object "
                            + m.object() + " to update (add it first)");
                }
                yield base.with(m.prompt(), revision, width, height);
            }
            case REMOVE -> {
                if (m.object() >= PromptSpec.DISCOVERED_ID_BASE) {
                    if (!discoveredLive.test(m.object())) {
                        throw new PromptRejected(PromptRejected.UNKNOWN_OBJECT, "stream " + stream
                                + ": no discovered object " + m.object() + " is tracked to remove");
                    }
                    yield base.withoutDiscovered(m.object());
                }
                if (!base.contains(m.object())) {
                    throw new PromptRejected(PromptRejected.UNKNOWN_OBJECT, "stream " + stream + ": no object "
                            + m.object() + " to remove");
                }
                yield base.without(m.object());
            }
        };
        changes = revision;
        String what = m.concept() != null ? "concept \"" + LogSafe.of(m.concept().text()) + "\""
                : "object " + m.object();
        if (asked < nextFrame) {
            log.info("stream {}: {} of {} was for frame {}, already past: applied from frame {} (now)",
                    stream, m.op().wireName(), what, asked, from);
        } else if (asked < last) {
            log.info("stream {}: {} of {} applies from frame {}, after the change pending there", stream,
                    m.op().wireName(), what, last);
        }
        List<Entry> updated = new ArrayList<>(e);
        int merged = 1;
        if (from == last) {
            // superseded at the same frame: the snapshot there holds this change too, and counts it
            merged += updated.remove(updated.size() - 1).changes();
        }
        updated.add(new Entry(from, next, merged));
        entries = List.copyOf(updated);
        return from;
    }

    /** {@code base} with one more concept, checked against the stream's limits and frame. */
    private Snapshot withConcept(Snapshot base, ConceptPrompt c, int width, int height) throws PromptRejected {
        if (base.hasConcept(c.text())) {
            throw new PromptRejected(PromptRejected.CONCEPT_EXISTS, "stream " + stream + ": concept \""
                    + LogSafe.of(c.text()) + "\" is looked for already (remove-concept it first)");
        }
        String tooLong = limits.checkConcept(c.text());
        if (tooLong != null) {
            throw new PromptRejected(PromptRejected.BAD_CONCEPT, "stream " + stream + ": " + LogSafe.of(tooLong));
        }
        if (base.concepts().size() >= limits.maxConceptsPerStream()) {
            throw new PromptRejected(PromptRejected.CONCEPT_LIMIT, "stream " + stream + " looks for "
                    + base.concepts().size() + " concepts, samstream.limits.max-concepts-per-stream = "
                    + limits.maxConceptsPerStream() + " (remove-concept one first)");
        }
        for (ConceptPrompt.Box b : c.boxes()) {
            if (width > 0 && !b.inside(width, height)) {
                throw new PromptRejected(PromptRejected.OUTSIDE_FRAME, "stream " + stream + ": concept \""
                        + LogSafe.of(c.text()) + "\" has an exemplar box outside the " + width + "x" + height
                        + " frame");
            }
        }
        return base.withConcept(c);
    }

    /** The changes of snapshots that have not applied to a frame yet (from {@code nextFrame} on). */
    private static int pending(List<Entry> e, long nextFrame) {
        int n = 0;
        for (int i = e.size() - 1; i >= 0 && e.get(i).fromFrame() >= nextFrame; i--) {
            n += e.get(i).changes();
        }
        return n;
    }

    /** Frame {@code index} left the pipeline (frames leave in order): older snapshots are not needed any more. */
    void frameDone(long index) {
        if (entries.size() < 2) {
            return;
        }
        synchronized (this) {
            List<Entry> e = entries;
            int drop = 0;
            while (drop + 1 < e.size() && e.get(drop + 1).fromFrame() <= index + 1) {
                drop++;
            }
            if (drop > 0) {
                List<Entry> kept = new ArrayList<>(e.subList(drop, e.size()));
                kept.set(0, new Entry(0, kept.get(0).snapshot(), kept.get(0).changes()));
                entries = List.copyOf(kept);
            }
        }
    }

    /**
     * The prompts in force for the frame after {@code frame} and those pending for later frames, for the
     * state topic (failover): another engine {@link #restore}s them and goes on after {@code frame}.
     */
    synchronized PromptsState export(long frame) {
        List<Entry> e = entries;
        int first = 0;
        for (int i = e.size() - 1; i > 0; i--) {
            if (e.get(i).fromFrame() <= frame + 1) {
                first = i;
                break;
            }
        }
        List<PromptsState.Step> steps = new ArrayList<>();
        for (Entry en : e.subList(first, e.size())) {
            Snapshot.State st = en.snapshot().state();
            Map<Integer, PromptsState.Changed> changed = new LinkedHashMap<>();
            st.changed().forEach((id, o) -> changed.put(id, new PromptsState.Changed(o, st.revisions().get(id))));
            List<ConceptPrompt> concepts = en.snapshot().concepts();
            steps.add(new PromptsState.Step(en.fromFrame(), en.snapshot().generation(), changed, st.removed(),
                    concepts.equals(ConceptPrompt.of(configuredSpec.concepts())) ? null : concepts));
        }
        return new PromptsState(changes, steps);
    }

    /**
     * Takes up the prompts another engine {@link #export}ed for this stream (of the same definition), before
     * its first frame here; the first snapshot applies from frame 0 on, the pending ones from their frames.
     */
    synchronized void restore(PromptsState state) {
        List<Entry> restored = new ArrayList<>();
        for (PromptsState.Step step : state.steps()) {
            Map<Integer, ObjectPrompt> changed = new LinkedHashMap<>();
            Map<Integer, Long> revisions = new LinkedHashMap<>();
            step.changed().forEach((id, c) -> {
                changed.put(id, c.prompt());
                revisions.put(id, c.revision());
            });
            Snapshot s = new Snapshot(stream, configuredSpec, step.generation(), changed, revisions, step.removed(),
                    step.concepts());
            restored.add(new Entry(restored.isEmpty() ? 0 : step.fromFrame(), s, restored.isEmpty() ? 0 : 1));
        }
        changes = Math.max(changes, state.changes());
        entries = List.copyOf(restored);
    }

    /**
     * One consistent set of a stream's objects: the configured ones, less those removed, with those added
     * or updated at run time. Made by a reset (or at the start) with its objects at hand, or from the
     * previous snapshot and one change: then the objects are worked out when first asked for (and the link
     * to the previous snapshot let go), so pending changes share their predecessors' objects.
     */
    static final class Snapshot {
        /** Changes stacked on unresolved snapshots before one is resolved at once (bounds lookups and stacks). */
        private static final int MAX_DEPTH = 32;

        private final String stream;
        private final PromptSpec configured;
        private final Set<Integer> configuredIds;
        /** The number of the reset this snapshot descends from (0: none); the configured objects' revision. */
        private final long generation;
        /** Unresolved snapshots between this one and a resolved one (0: this one is resolved). */
        private final int depth;
        /** A {@link State} once resolved, until then a {@link Delta}; replaced once, never modified. */
        private volatile Object body;
        private final AtomicBoolean warnedOutside = new AtomicBoolean();
        /** The concepts (SAM 3) in the order asked for: few, so each snapshot holds its own list. */
        private final List<ConceptPrompt> concepts;

        /** One change: {@code prompt} for an add or update, null for a removal. */
        private record Change(int id, ObjectPrompt prompt, long revision, boolean discovered) {}

        private record Delta(Snapshot previous, Change change) {}

        /**
         * The objects: {@code changed} = added or updated at run time (none of them in {@code removed}),
         * {@code revisions} = the number of the change that made each one's prompt, {@code removed} =
         * configured objects removed at run time and discovered ones (ids from DISCOVERED_ID_BASE up).
         */
        record State(Map<Integer, ObjectPrompt> changed, Map<Integer, Long> revisions, Set<Integer> removed,
                Set<Integer> ids) {}

        /** The configured objects, of generation {@code generation}. */
        Snapshot(String stream, PromptSpec configured, long generation) {
            this.stream = stream;
            this.configured = configured;
            this.generation = generation;
            Set<Integer> all = new LinkedHashSet<>();
            for (ObjectPrompt o : configured.objects()) {
                all.add(o.id());
            }
            for (int i = 0; i < configured.grid() * configured.grid(); i++) {
                all.add(PromptSpec.GRID_ID_BASE + i);
            }
            this.configuredIds = Collections.unmodifiableSet(all);
            this.depth = 0;
            this.body = new State(Map.of(), Map.of(), Set.of(), configuredIds);
            this.concepts = ConceptPrompt.of(configured.concepts());
        }

        /**
         * A snapshot taken up from another engine ({@link StreamPrompts#restore}), resolved; {@code concepts} null:
         * the configured ones.
         */
        Snapshot(String stream, PromptSpec configured, long generation, Map<Integer, ObjectPrompt> changed,
                Map<Integer, Long> revisions, Set<Integer> removed, List<ConceptPrompt> concepts) {
            this.stream = stream;
            this.configured = configured;
            this.generation = generation;
            this.configuredIds = new Snapshot(stream, configured, generation).configuredIds;
            this.depth = 0;
            this.concepts = concepts == null ? ConceptPrompt.of(configured.concepts()) : List.copyOf(concepts);
            Set<Integer> ids = new LinkedHashSet<>(configuredIds);
            ids.removeAll(removed);
            ids.addAll(changed.keySet());
            this.body = new State(Collections.unmodifiableMap(new LinkedHashMap<>(changed)),
                    Collections.unmodifiableMap(new LinkedHashMap<>(revisions)),
                    Collections.unmodifiableSet(new LinkedHashSet<>(removed)), Collections.unmodifiableSet(ids));
        }

        /** The previous snapshot's objects (its body shared, the change chain included) with other concepts. */
        private Snapshot(Snapshot previous, List<ConceptPrompt> concepts) {
            this.stream = previous.stream;
            this.configured = previous.configured;
            this.configuredIds = previous.configuredIds;
            this.generation = previous.generation;
            this.concepts = List.copyOf(concepts);
            Object b = previous.body;
            this.body = b;
            this.depth = b instanceof State ? 0 : previous.depth;
        }

        private Snapshot(Snapshot previous, Change change) {
            this.stream = previous.stream;
            this.configured = previous.configured;
            this.configuredIds = previous.configuredIds;
            this.generation = previous.generation;
            this.concepts = previous.concepts;
            int d = previous.body instanceof State ? 1 : previous.depth + 1;
            this.body = new Delta(previous, change);
            if (d > MAX_DEPTH) {
                state();
                d = 0;
            }
            this.depth = d;
        }

        /** The objects, worked out from the previous snapshot and the change when first asked for. */
        State state() {
            if (body instanceof State s) {
                return s;
            }
            synchronized (this) {
                if (body instanceof State s) {
                    return s;
                }
                ArrayDeque<Change> pending = new ArrayDeque<>();
                Object b = body;
                while (b instanceof Delta d) {
                    pending.push(d.change());
                    b = d.previous().body;
                }
                State base = (State) b;
                Map<Integer, ObjectPrompt> changed = new LinkedHashMap<>(base.changed());
                Map<Integer, Long> revisions = new LinkedHashMap<>(base.revisions());
                Set<Integer> removed = new LinkedHashSet<>(base.removed());
                for (Change c : pending) { // oldest first
                    if (c.prompt() != null) {
                        changed.put(c.id(), c.prompt());
                        revisions.put(c.id(), c.revision());
                        removed.remove(c.id());
                    } else if (c.discovered()) {
                        removed.add(c.id());
                    } else {
                        changed.remove(c.id());
                        revisions.remove(c.id());
                        if (configuredIds.contains(c.id())) {
                            removed.add(c.id());
                        }
                    }
                }
                Set<Integer> ids = new LinkedHashSet<>(configuredIds);
                ids.removeAll(removed);
                ids.addAll(changed.keySet());
                State s = new State(Collections.unmodifiableMap(changed), Collections.unmodifiableMap(revisions),
                        Collections.unmodifiableSet(removed), Collections.unmodifiableSet(ids));
                body = s; // lets go of the previous snapshots
                return s;
            }
        }

        /** Whether object {@code id} (a prompted one) is in this snapshot, without resolving it. */
        boolean contains(int id) {
            Object b = body;
            while (b instanceof Delta d) {
                Change c = d.change();
                if (c.id() == id && !c.discovered()) {
                    return c.prompt() != null;
                }
                b = d.previous().body;
            }
            return ((State) b).ids().contains(id);
        }

        /** The concepts to look for (SAM 3), in the order asked for. */
        List<ConceptPrompt> concepts() {
            return concepts;
        }

        boolean hasConcept(String text) {
            return concepts.stream().anyMatch(c -> c.text().equals(text));
        }

        List<String> conceptTexts() {
            return concepts.stream().map(ConceptPrompt::text).toList();
        }

        Snapshot withConcept(ConceptPrompt c) {
            List<ConceptPrompt> more = new ArrayList<>(concepts);
            more.add(c);
            return new Snapshot(this, more);
        }

        Snapshot withoutConcept(String text) {
            return new Snapshot(this, concepts.stream().filter(c -> !c.text().equals(text)).toList());
        }

        /** Every object id of this snapshot. */
        Set<Integer> ids() {
            return state().ids();
        }

        /**
         * The reset this snapshot descends from: a tracker that sees it change starts over from the
         * configured objects.
         */
        long generation() {
            return generation;
        }

        /**
         * Which prompt of object {@code id} this is: it changes with every add or update of the id (and,
         * for configured objects, with every reset), so a tracker knows when to seed the object again.
         */
        long revision(int id) {
            Long r = state().revisions().get(id);
            return r != null ? r : generation;
        }

        Snapshot with(ObjectPrompt o, long revision, int width, int height) throws PromptRejected {
            if (width > 0 && !inside(o, width, height)) {
                throw new PromptRejected(PromptRejected.OUTSIDE_FRAME, "stream " + stream + ": object " + o.id()
                        + " has a point or box corner outside the " + width + "x" + height + " frame");
            }
            return new Snapshot(this, new Change(o.id(), o, revision, false));
        }

        Snapshot without(int id) {
            return new Snapshot(this, new Change(id, null, 0, false));
        }

        /** Ends a discovered object's track (its id is never given again, so it stays removed). */
        Snapshot withoutDiscovered(int id) {
            return new Snapshot(this, new Change(id, null, 0, true));
        }

        /**
         * The objects of a {@code width} x {@code height} frame: configured ones first (in their order, an
         * updated one in its place), then those added at run time. A run-time object outside the frame (its
         * size was not known when it came) is left out, with a warning, rather than failing the stream.
         */
        List<ObjectPrompt> resolve(int width, int height) {
            State st = state();
            Map<Integer, ObjectPrompt> changed = st.changed();
            Set<Integer> removed = st.removed();
            List<ObjectPrompt> out = new ArrayList<>();
            Set<Integer> placed = new LinkedHashSet<>();
            for (ObjectPrompt o : configured.resolve(width, height)) {
                ObjectPrompt c = changed.get(o.id());
                if (c != null) {
                    placed.add(o.id());
                    addIfInside(out, c, width, height);
                } else if (!removed.contains(o.id())) {
                    out.add(o);
                }
            }
            for (ObjectPrompt c : changed.values()) {
                if (!placed.contains(c.id())) {
                    addIfInside(out, c, width, height);
                }
            }
            return out;
        }

        /** The objects of a {@code width} x {@code height} frame ({@link #resolve}) with their revisions. */
        TrackPrompts trackPrompts(int width, int height) {
            List<TrackPrompts.Seed> seeds = new ArrayList<>();
            for (ObjectPrompt o : resolve(width, height)) {
                seeds.add(new TrackPrompts.Seed(o, revision(o.id())));
            }
            Set<Integer> dismissed = new LinkedHashSet<>();
            for (int id : state().removed()) {
                if (id >= PromptSpec.DISCOVERED_ID_BASE) {
                    dismissed.add(id);
                }
            }
            return new TrackPrompts(seeds, generation, dismissed, concepts);
        }

        private void addIfInside(List<ObjectPrompt> out, ObjectPrompt o, int width, int height) {
            if (inside(o, width, height)) {
                out.add(o);
            } else if (warnedOutside.compareAndSet(false, true)) {
                log.warn("stream {}: object {} (from the prompts topic) lies outside the {}x{} frame: left out",
                        stream, o.id(), width, height);
            }
        }

        static boolean inside(ObjectPrompt o, int width, int height) {
            if (o.points() != null) {
                for (double[] p : o.points()) {
                    if (p[0] > width || p[1] > height) {
                        return false;
                    }
                }
            }
            double[] b = o.box();
            return b == null || (b[2] <= width && b[3] <= height);
        }
    }
}
