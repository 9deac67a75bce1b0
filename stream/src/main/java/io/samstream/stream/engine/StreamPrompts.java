package io.samstream.stream.engine;

import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.stream.track.TrackPrompts;
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
 * the newest snapshot, in the order they arrive.
 */
final class StreamPrompts {
    private static final Logger log = LoggerFactory.getLogger(StreamPrompts.class);

    /** A snapshot and the first frame it applies to. */
    private record Entry(long fromFrame, Snapshot snapshot) {}

    private final String stream;
    private final PromptSpec configuredSpec;
    private final Snapshot configured;
    /** Numbers the changes (revisions of objects, generations of resets); 0 is the configured start. */
    private long changes;
    /** Ordered by fromFrame; the first applies from frame 0. Replaced, never modified. */
    private volatile List<Entry> entries;
    /** The first frame whose prompts the decoder has not taken yet ({@link #take}): "now" for a change. */
    private long decodeNext;

    StreamPrompts(String stream, PromptSpec configured) {
        this.stream = stream;
        this.configuredSpec = configured;
        this.configured = new Snapshot(stream, configured, Map.of(), Map.of(), Set.of(), 0);
        this.entries = List.of(new Entry(0, this.configured));
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
        Snapshot next = switch (m.op()) {
            // A new generation: tracking starts over from the configured objects.
            case RESET -> new Snapshot(stream, configuredSpec, Map.of(), Map.of(), Set.of(), revision);
            case ADD -> {
                if (base.ids().contains(m.object())) {
                    throw new PromptRejected(PromptRejected.OBJECT_EXISTS, "stream " + stream + ": object "
                            + m.object() + " exists already (update it, or remove it first)");
                }
                yield base.with(m.prompt(), revision, width, height);
            }
            case UPDATE -> {
                if (!base.ids().contains(m.object())) {
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
                if (!base.ids().contains(m.object())) {
                    throw new PromptRejected(PromptRejected.UNKNOWN_OBJECT, "stream " + stream + ": no object "
                            + m.object() + " to remove");
                }
                yield base.without(m.object());
            }
        };
        changes = revision;
        List<Entry> e = entries;
        long last = e.get(e.size() - 1).fromFrame();
        long from = m.frame().orElse(nextFrame);
        if (from < nextFrame) {
            log.info("stream {}: {} of object {} was for frame {}, already past: applied from frame {} (now)",
                    stream, m.op().wireName(), m.object(), from, nextFrame);
            from = nextFrame;
        }
        if (from < last) {
            // Changes apply in the order they arrive: one built on a later pending change cannot come first.
            log.info("stream {}: {} of object {} applies from frame {}, after the change pending there", stream,
                    m.op().wireName(), m.object(), last);
            from = last;
        }
        List<Entry> updated = new ArrayList<>(e);
        if (from == last) {
            updated.remove(updated.size() - 1); // superseded at the same frame
        }
        updated.add(new Entry(from, next));
        entries = List.copyOf(updated);
        return from;
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
                kept.set(0, new Entry(0, kept.get(0).snapshot()));
                entries = List.copyOf(kept);
            }
        }
    }

    /**
     * One consistent set of a stream's objects: the configured ones, less those removed, with those added
     * or updated at run time.
     */
    static final class Snapshot {
        private final String stream;
        private final PromptSpec configured;
        /** Objects added or updated at run time, by id (none of them is in {@link #removed}). */
        private final Map<Integer, ObjectPrompt> changed;
        /** The revision of each changed object: the number of the change that made its prompt. */
        private final Map<Integer, Long> revisions;
        /** The number of the reset this snapshot descends from (0: none); the configured objects' revision. */
        private final long generation;
        /** Configured objects removed at run time, and discovered ones (ids from DISCOVERED_ID_BASE up). */
        private final Set<Integer> removed;
        private final Set<Integer> configuredIds;
        private final Set<Integer> ids;
        private final AtomicBoolean warnedOutside = new AtomicBoolean();

        Snapshot(String stream, PromptSpec configured, Map<Integer, ObjectPrompt> changed, Map<Integer, Long> revisions,
                Set<Integer> removed, long generation) {
            this.stream = stream;
            this.configured = configured;
            this.changed = Collections.unmodifiableMap(new LinkedHashMap<>(changed));
            this.revisions = Map.copyOf(revisions);
            this.generation = generation;
            this.removed = Set.copyOf(removed);
            Set<Integer> all = new LinkedHashSet<>();
            for (ObjectPrompt o : configured.objects()) {
                all.add(o.id());
            }
            for (int i = 0; i < configured.grid() * configured.grid(); i++) {
                all.add(PromptSpec.GRID_ID_BASE + i);
            }
            this.configuredIds = Set.copyOf(all);
            all.removeAll(removed);
            all.addAll(changed.keySet());
            this.ids = Collections.unmodifiableSet(all);
        }

        /** Every object id of this snapshot. */
        Set<Integer> ids() {
            return ids;
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
            Long r = revisions.get(id);
            return r != null ? r : generation;
        }

        Snapshot with(ObjectPrompt o, long revision, int width, int height) throws PromptRejected {
            if (width > 0 && !inside(o, width, height)) {
                throw new PromptRejected(PromptRejected.OUTSIDE_FRAME, "stream " + stream + ": object " + o.id()
                        + " has a point or box corner outside the " + width + "x" + height + " frame");
            }
            Map<Integer, ObjectPrompt> c = new LinkedHashMap<>(changed);
            c.put(o.id(), o);
            Map<Integer, Long> rev = new LinkedHashMap<>(revisions);
            rev.put(o.id(), revision);
            Set<Integer> r = new LinkedHashSet<>(removed);
            r.remove(o.id());
            return new Snapshot(stream, configured, c, rev, r, generation);
        }

        Snapshot without(int id) {
            Map<Integer, ObjectPrompt> c = new LinkedHashMap<>(changed);
            Set<Integer> r = new LinkedHashSet<>(removed);
            Map<Integer, Long> rev = new LinkedHashMap<>(revisions);
            c.remove(id);
            rev.remove(id);
            if (configuredIds.contains(id)) {
                r.add(id);
            }
            return new Snapshot(stream, configured, c, rev, r, generation);
        }

        /** Ends a discovered object's track (its id is never given again, so it stays in {@link #removed}). */
        Snapshot withoutDiscovered(int id) {
            Set<Integer> r = new LinkedHashSet<>(removed);
            r.add(id);
            return new Snapshot(stream, configured, changed, revisions, r, generation);
        }

        /**
         * The objects of a {@code width} x {@code height} frame: configured ones first (in their order, an
         * updated one in its place), then those added at run time. A run-time object outside the frame (its
         * size was not known when it came) is left out, with a warning, rather than failing the stream.
         */
        List<ObjectPrompt> resolve(int width, int height) {
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
            for (int id : removed) {
                if (id >= PromptSpec.DISCOVERED_ID_BASE) {
                    dismissed.add(id);
                }
            }
            return new TrackPrompts(seeds, generation, dismissed);
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
