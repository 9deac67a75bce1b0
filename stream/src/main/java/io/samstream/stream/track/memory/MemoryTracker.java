package io.samstream.stream.track.memory;

import io.samstream.config.PromptSpec;
import io.samstream.gpu.image.PillowBilinearResize;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.sam2.ObjectPrompt;
import io.samstream.gpu.sam2.ObjectResult;
import io.samstream.gpu.sam2.Sam2Tracking;
import io.samstream.stream.track.MaskReadout;
import io.samstream.stream.track.StreamTracker;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
import io.samstream.stream.track.TrackingState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Memory mode ({@code samstream.tracking.mode = memory}) for one stream: a stream of the SAM 2.1 model ({@link
 * Sam2Tracking}: the CPU reference or the whole step on a GPU) fed the stream's frames one at a time, with the objects
 * the stream's prompts say.
 *
 * <ul>
 *   <li>A prompt whose revision is new (the object was added or its prompt updated) conditions the object on
 *       this frame (an updated one starts afresh: its memory is dropped);</li>
 *   <li>an object no longer among the prompts (removed) is dropped with its memory;</li>
 *   <li>a new generation (a reset) or a new frame size starts every object over;</li>
 *   <li>an object whose object score says it is not visible, or whose mask at the frame's size is empty, is
 *       listed in {@code hidden}; an object back from hidden (hidden on the frame before, not prompted on this one)
 *       whose mask lies more than {@value MaskClaims#ON_ANOTHER} under a mask shown or claimed on this frame has slid
 *       onto that object and stays hidden too (see claims below); after
 *       {@code hiddenLostAfter} such frames in a row it is lost ({@link HiddenObjects}): listed once in
 *       {@code lost};</li>
 *   <li>a lost object keeps its memory for {@code forgetAfter} more frames ({@code memory-forget-after}) and the
 *       model goes on stepping it, as Meta's {@code SAM2VideoPredictor} keeps scoring an absent object; its masks
 *       are not published meanwhile (it is in neither {@code objects} nor {@code hidden}). When its object score
 *       says visible on {@code foundAfter} frames in a row ({@code memory-found-after}), each time with a
 *       non-empty mask clear of every mask shown or claimed before it on that frame (neither mask more than {@value
 *       MaskClaims#FOUND_MAX_OVERLAP} under the other: it never takes another object's region), it is <b>found
 *       again</b>: published from that frame on under its id and prompt revision, counted as kalman mode counts a
 *       re-identified object ({@link TrackingMeters#reidentified}). After {@code forgetAfter}
 *       frames without being found its memory is dropped for good ({@link Sam2Tracking.StreamTracker#remove}:
 *       on the GPU its bank is freed), so memory per stream stays bounded; it is not tracked again until its
 *       prompt is updated or the stream is reset (as in kalman mode). {@code forgetAfter} 0: dropped when
 *       lost;</li>
 *   <li>a lost object re-prompted (a new revision) starts afresh from its prompt; one removed is dropped with its
 *       memory, as any object;</li>
 *   <li>claims: objects visible on the frame before (or prompted on this one) are shown first, as the model gives
 *       them (two such objects may overlap: no non-overlap constraint, as in Meta's predictor). Then objects back
 *       from hidden and lost objects scored visible <i>claim</i> their masks, the highest object score first, each
 *       against the masks shown or claimed before it: so when an object coming back and a lost one coming out
 *       land on one region (the tiny model hands a covered object's memory to a similar one coming out), the one
 *       the model is surer of has it. A lost object's claim, clear, holds its region on that frame even before it
 *       is published.</li>
 * </ul>
 * Failover: {@link #state} / {@link #takeState} give what another engine needs to go on ({@link
 * MemoryTrackerState}); {@link #restore} there conditions each object that was visible afresh on its last box,
 * under its id and revision, on the first frame; an object hidden at the move is reported lost on that frame
 * (its memory, which could have found it again, is not carried). A lost object whose memory was kept is not in the
 * state's objects, only among its lost ones: on the new engine it stays lost (reported once, on the old one), as
 * one whose memory was dropped; it comes back when re-prompted.
 * The frame goes to the model resized to its square input (Pillow's bilinear); prompts are
 * scaled to that input. Masks come back at the frame's size: the low-resolution logits resized bilinearly,
 * above 0. A record's {@code score} is the decoder's predicted IoU of the chosen mask, as in kalman mode.
 * A stream's frames are prepared in order and finished in order; {@link #step} is {@link #prepare}, the model's call,
 * {@link #finish}. To give a batching model a stream's consecutive frames in one call, or to prepare the next call
 * while the frames of the last are finished on another thread, {@link #prepareAhead} prepares a frame before the
 * ones before it are finished, where their finish cannot change it. Preparing and finishing hold the tracker's lock;
 * the model's call for a frame must not run beside the finish of the frame before it unless that frame was prepared
 * ahead of it (then that finish does not touch the objects the call steps).
 */
public final class MemoryTracker implements StreamTracker {
    private static final Logger log = LoggerFactory.getLogger(MemoryTracker.class);

    private final String stream;
    private final Sam2Tracking model;
    private final TrackingMeters meters;
    private final HiddenObjects hidden;
    private final int hiddenLostAfter;
    private final int forgetAfter;
    private final int foundAfter;
    /** Lost objects whose memory is kept (still stepped, not published), in the order they were lost. */
    private final Map<Integer, Remembered> remembered = new LinkedHashMap<>();
    private Sam2Tracking.StreamTracker tracker;
    /** The revision each tracked object was last prompted with. */
    private final Map<Integer, Long> revisions = new HashMap<>();
    /** Lost objects with the revision they were lost under: not prompted again until it changes. */
    private final Map<Integer, Long> ended = new HashMap<>();
    private long generation = Long.MIN_VALUE;
    private int width;
    private int height;
    /** Each tracked object's box on its last visible frame (frame pixels). */
    private final Map<Integer, double[]> lastBox = new HashMap<>();
    /** A state taken up before the first frame, applied there. */
    private MemoryTrackerState restored;
    /** Restored objects to condition on their last box at the first frame, and those lost by the move. */
    private final Map<Integer, double[]> resume = new HashMap<>();
    private final List<Integer> lostByMove = new ArrayList<>();
    private boolean stepped;
    /** The last frame prepared and the last finished, by {@link Pending#seq}; the last finished's index. */
    private long preparedSeq;
    private long finishedSeq;
    private long lastFinished = -1;
    private int stateEvery;
    private final NavigableMap<Long, MemoryTrackerState> states = new TreeMap<>();

    /**
     * A lost object whose memory is kept: the frame it was lost on, frames stepped since, and frames in a row it has
     * been scored visible with a clear mask.
     */
    private static final class Remembered {
        final long lostFrame;
        int frames;
        int seenInARow;

        Remembered(long lostFrame) {
            this.lostFrame = lostFrame;
        }
    }

    /** A lost object's memory dropped when it is lost (never found again). */
    public MemoryTracker(String stream, Sam2Tracking model, int hiddenLostAfter, TrackingMeters meters) {
        this(stream, model, hiddenLostAfter, 0, 1, meters);
    }

    /**
     * @param hiddenLostAfter hidden frames in a row after which an object is lost (at least 1)
     * @param forgetAfter     frames after it is lost that its memory is kept, so it can be found again (0: none)
     * @param foundAfter      frames in a row a lost object must be seen, clear of the others, to be found (at least 1)
     */
    public MemoryTracker(String stream, Sam2Tracking model, int hiddenLostAfter, int forgetAfter, int foundAfter,
                         TrackingMeters meters) {
        if (forgetAfter < 0 || foundAfter < 1) {
            throw new IllegalArgumentException("memory-forget-after must be at least 0 and memory-found-after at least"
                    + " 1, got " + forgetAfter + " and " + foundAfter);
        }
        this.forgetAfter = forgetAfter;
        this.foundAfter = foundAfter;
        this.stream = stream;
        this.model = model;
        this.meters = meters;
        this.hidden = new HiddenObjects(hiddenLostAfter);
        this.hiddenLostAfter = hiddenLostAfter;
        this.tracker = model.openStream();
    }

    /**
     * The index of the last frame whose outcome {@link #finish} made (-1 before any): how far the stream's outcomes
     * have got while later frames may already be with the model.
     */
    public synchronized long lastFinished() {
        return lastFinished;
    }

    /** The model its streams run on. */
    public Sam2Tracking model() {
        return model;
    }

    /**
     * The objects whose memory is kept now (tracked ones and lost ones not yet forgotten), in the order they were
     * added.
     */
    public List<Integer> objects() {
        return List.copyOf(tracker.objects());
    }

    /** The lost objects whose memory is kept (still stepped, unpublished, may be found again), in the order lost. */
    public synchronized List<Integer> remembered() {
        return List.copyOf(remembered.keySet());
    }

    /**
     * One frame: its RGB bytes ({@code width x height}, interleaved) and the stream's prompts for it; the
     * visible objects' masks in prompt order, the hidden ids and the ids lost on this frame.
     */
    public synchronized TrackedFrame step(long frame, int width, int height, byte[] rgb, TrackPrompts prompts) {
        Pending p = prepare(frame, width, height, rgb, prompts);
        return p.done() != null ? p.done() : finish(p, p.stream().track(p.square(), p.prompts()));
    }

    /**
     * What a frame needs from the model, made by {@link #prepare}: the frame's size, the stream's tracker, the frame at
     * the model's size and the prompts that add objects on it; or, when no object is to be followed, the frame's
     * outcome ({@code done}). {@code seq} numbers a tracker's prepared frames in order.
     */
    public record Pending(long seq, long frame, int width, int height, Sam2Tracking.StreamTracker stream, byte[] square,
                          List<ObjectPrompt> prompts, Map<Integer, TrackPrompts.Seed> current, List<Integer> lostIds,
                          TrackedFrame done) {}

    /**
     * The first half of {@link #step}: prompts and resets applied, the frame resized; the model's call is the
     * caller's ({@link Sam2Tracking#track(List, List, List)} for several streams at once), then {@link #finish}.
     */
    public synchronized Pending prepare(long frame, int width, int height, byte[] rgb, TrackPrompts prompts) {
        return prepare(frame, width, height, rgb, null, prompts, false);
    }

    /**
     * A {@code width x height} frame as the model takes it: resized to its {@code side x side} input with Pillow's
     * bilinear filter, as SAM 2's reference pre-processing does. Depends on nothing else, so it can be made ahead.
     */
    public static byte[] modelInput(int side, int width, int height, byte[] rgb) {
        return PillowBilinearResize.resize(new RgbImage(width, height, rgb), side, side).rgb();
    }

    /**
     * {@link #prepare} for a frame of the stream while the frames before it ({@code unfinished}, in order, not
     * {@code done}) are prepared and not yet {@link #finish}ed, so that the model can take them all in one call (a
     * stream's consecutive frames: {@link Sam2Tracking#track(List, List, List)}); {@link #prepare} when there are
     * none. Null when finishing those frames first could change what this frame gives, and so the frame must wait
     * for their finish: its prompts differ from the last unfinished frame's (a reset, an object added, updated or
     * removed), its size differs, or finishing them could change the objects the model follows on it (a tracked
     * object hidden long enough to be lost within them, a lost one whose memory is kept old enough to be forgotten
     * within them). Otherwise nothing {@link #finish} does to the stream's bookkeeping in between bears on this
     * frame's preparation or on the model's work for it, and the outcome is the one stepping frame by frame gives.
     * Frames of {@code unfinished} that were finished meanwhile (on another thread) are left out: so a caller may pass
     * every frame it has not seen finished yet.
     */
    public synchronized Pending prepareAhead(List<Pending> unfinished, long frame, int width, int height, byte[] rgb,
                                             TrackPrompts prompts) {
        return prepareAhead(unfinished, frame, width, height, rgb, null, prompts);
    }

    /**
     * {@link #prepareAhead(List, long, int, int, byte[], TrackPrompts)} with the frame already resized to the model's
     * input ({@link #modelInput}, made ahead of time); null, or bytes of another size, and it is resized here.
     */
    public synchronized Pending prepareAhead(List<Pending> unfinished, long frame, int width, int height, byte[] rgb,
                                             byte[] modelInput, TrackPrompts prompts) {
        List<Pending> open = new ArrayList<>(unfinished.size());
        for (Pending p : unfinished) {
            if (p.done() != null || p.seq() > finishedSeq) {
                open.add(p);
            }
        }
        unfinished = open;
        if (unfinished.isEmpty()) {
            return prepare(frame, width, height, rgb, modelInput, prompts, false);
        }
        Pending last = unfinished.get(unfinished.size() - 1);
        if (last.done() != null || last.stream() != tracker || prompts.generation() != generation
                || width != this.width || height != this.height || restored != null) {
            return null;
        }
        Map<Integer, Long> seeds = new LinkedHashMap<>();
        for (TrackPrompts.Seed seed : prompts.objects()) {
            seeds.put(seed.prompt().id(), seed.revision());
        }
        Map<Integer, Long> before = new LinkedHashMap<>();
        for (TrackPrompts.Seed seed : last.current().values()) {
            before.put(seed.prompt().id(), seed.revision());
        }
        if (!seeds.equals(before) || !List.copyOf(seeds.keySet()).equals(List.copyOf(before.keySet()))) {
            return null;
        }
        int n = unfinished.size();
        Set<Integer> followed = new LinkedHashSet<>(tracker.objects());
        for (Pending p : unfinished) {
            for (ObjectPrompt op : p.prompts()) {
                followed.add(op.objectId());
            }
        }
        for (Integer id : followed) {
            Remembered k = remembered.get(id);
            if (k != null ? k.frames + n >= forgetAfter : hidden.hiddenFor(id) + n >= hiddenLostAfter) {
                return null;
            }
        }
        Pending p = prepare(frame, width, height, rgb, modelInput, prompts, true);
        if (!p.prompts().isEmpty()) {
            throw new IllegalStateException("stream " + stream + ": frame " + frame + " prepared ahead with new prompts");
        }
        return p;
    }

    /** {@link #prepare}; {@code ahead}: frames before it are prepared and not finished (never {@code done}). */
    private Pending prepare(long frame, int width, int height, byte[] rgb, byte[] modelInput, TrackPrompts prompts,
                            boolean ahead) {
        if (prompts.generation() != generation || width != this.width || height != this.height) {
            if (generation != Long.MIN_VALUE) {
                log.info("stream {}: {} at frame {}: every object starts over", stream,
                        prompts.generation() != generation ? "prompts reset" : "frame size changed to " + width + "x"
                                + height, frame);
            }
            tracker.close();
            tracker = model.openStream();
            revisions.clear();
            ended.clear();
            hidden.clear();
            lastBox.clear();
            remembered.clear();
            resume.clear();
            lostByMove.clear();
            if (restored != null && restored.generation() == prompts.generation()) {
                takeUp(restored);
            }
            generation = prompts.generation();
            this.width = width;
            this.height = height;
        }
        restored = null;
        stepped = true;
        Map<Integer, TrackPrompts.Seed> current = new LinkedHashMap<>();
        for (TrackPrompts.Seed s : prompts.objects()) {
            current.put(s.prompt().id(), s);
        }
        for (Integer id : List.copyOf(tracker.objects())) {
            if (!current.containsKey(id)) { // removed through the prompts
                tracker.remove(id);
                revisions.remove(id);
                hidden.forget(id);
                lastBox.remove(id);
                remembered.remove(id);
            }
        }
        ended.keySet().retainAll(current.keySet());
        int s = model.config().imageSize();
        List<ObjectPrompt> newPrompts = new ArrayList<>();
        for (TrackPrompts.Seed seed : current.values()) {
            int id = seed.prompt().id();
            Long seen = revisions.get(id);
            Long lost = ended.get(id);
            double[] last = resume.remove(id);
            if (last != null && seen != null && seen == seed.revision()) {
                // Taken over: conditioned afresh on its last box, under the same revision.
                newPrompts.add(modelPrompt(new PromptSpec.ObjectPrompt(id, null, last), s, width, height));
                continue;
            }
            if ((seen != null && seen == seed.revision()) || (lost != null && lost == seed.revision())) {
                continue;
            }
            newPrompts.add(modelPrompt(seed.prompt(), s, width, height));
            revisions.put(id, seed.revision());
            ended.remove(id);
            hidden.forget(id);
            remembered.remove(id); // re-prompted while its memory was kept: starts afresh
        }
        List<Integer> lostIds = new ArrayList<>();
        for (Integer id : lostByMove) {
            if (current.containsKey(id)) {
                lostIds.add(id);
                meters.lost().increment();
            }
        }
        if (!lostByMove.isEmpty()) {
            log.info("stream {}: object(s) {} hidden when the stream moved here: lost at frame {}", stream, lostByMove,
                    frame);
            lostByMove.clear();
        }
        if (!ahead && tracker.objects().isEmpty() && newPrompts.isEmpty()) {
            // Nothing to follow: the frame is not encoded (no memory refers to it).
            meters.active().set(0);
            keepState(frame);
            return new Pending(++preparedSeq, frame, width, height, tracker, null, List.of(), current, lostIds,
                    new TrackedFrame(List.of(), List.of(), lostIds));
        }
        byte[] square = modelInput != null && modelInput.length == (long) s * s * 3 ? modelInput
                : modelInput(s, width, height, rgb);
        return new Pending(++preparedSeq, frame, width, height, tracker, square, newPrompts, current, lostIds, null);
    }

    /** The second half of {@link #step}: the model's results for a {@link #prepare}d frame read into its outcome. */
    public TrackedFrame finish(Pending p, List<ObjectResult> results) {
        List<MaskSummary> masks = new ArrayList<>(results.size());
        for (ObjectResult r : results) {
            masks.add(mask(p, r));
        }
        return finish(p, results, masks);
    }

    /**
     * An object's mask on a {@link #prepare}d frame as {@link #finish} reads it: its logits at the frame's size, above
     * 0, summarized; null when its object score says it is not visible. The costly host part of a step, and it
     * depends on the result and the frame's size only, so it can be made on any thread while the model runs on.
     */
    public static MaskSummary mask(Pending p, ObjectResult r) {
        return r.visible() ? r.summary(p.height(), p.width()) : null;
    }

    /**
     * {@link #finish(Pending, List)} with each result's {@link #mask} made already ({@code summaries[i]} for {@code
     * results[i]}).
     */
    public synchronized TrackedFrame finish(Pending p, List<ObjectResult> results, List<MaskSummary> summaries) {
        if (summaries.size() != results.size()) {
            throw new IllegalArgumentException(results.size() + " results but " + summaries.size() + " masks");
        }
        finishedSeq = Math.max(finishedSeq, p.seq());
        lastFinished = p.frame();
        long frame = p.frame();
        Map<Integer, TrackPrompts.Seed> current = p.current();
        List<Integer> lostIds = new ArrayList<>(p.lostIds());
        Map<Integer, ObjectResult> byId = new HashMap<>();
        Map<Integer, MaskSummary> maskOf = new HashMap<>();
        for (int i = 0; i < results.size(); i++) {
            byId.put(results.get(i).objectId(), results.get(i));
            maskOf.put(results.get(i).objectId(), summaries.get(i));
        }
        Outcome o = new Outcome(frame, p, lostIds);
        // Objects visible on the frame before (or prompted on this one) are shown as they are. An object coming back
        // from hidden and a lost one whose memory is kept claim their masks after them (below).
        List<Claim> claims = new ArrayList<>();
        for (Integer id : current.keySet()) { // records list objects in prompt order
            ObjectResult r = byId.get(id);
            if (r == null || remembered.containsKey(id)) {
                continue; // lost earlier and not re-prompted: forgotten, or a claim below
            }
            // Shown when its object score says visible and its mask at the frame's size has pixels: a record never
            // carries an empty mask (an empty one counts as a hidden frame).
            MaskSummary m = maskOf.get(id);
            boolean visible = m != null && m.area() > 0;
            if (visible && hidden.hiddenFor(id) > 0 && !r.conditioning()) {
                claims.add(new Claim(id, r, m, null));
            } else {
                o.observe(id, r, m, visible);
            }
        }
        for (Integer id : current.keySet()) {
            Remembered k = remembered.get(id);
            ObjectResult r = byId.get(id);
            if (k == null || r == null || o.lostNow.contains(id)) {
                continue;
            }
            k.frames++;
            MaskSummary m = maskOf.get(id);
            if (m != null && m.area() > 0) {
                claims.add(new Claim(id, r, m, k));
            } else {
                k.seenInARow = 0;
            }
        }
        // Claims by object score, the surest first, each against the masks shown or claimed before it: a returning
        // object not mostly on one of them is shown; a lost one clear of them all is seen (found after foundAfter
        // such frames in a row), and its mask is its own on this frame whether or not it is published yet.
        claims.sort(Comparator.comparingDouble((Claim c) -> -c.result().objectScore()));
        for (Claim c : claims) {
            if (c.lost() == null) {
                o.observe(c.id(), c.result(), c.mask(), !MaskClaims.onAnother(c.mask(), o.taken));
                continue;
            }
            Remembered k = c.lost();
            boolean seen = MaskClaims.clearOf(c.mask(), o.taken);
            k.seenInARow = seen ? k.seenInARow + 1 : 0;
            if (!seen) {
                continue;
            }
            o.taken.add(c.mask());
            if (k.seenInARow >= foundAfter) {
                int id = c.id();
                remembered.remove(id);
                revisions.put(id, ended.remove(id));
                hidden.forget(id);
                o.show(id, c.result(), c.mask(), false);
                meters.reidentified().increment();
                log.info("stream {}: object {} found again at frame {}, {} frame(s) after it was lost (visible {} frames"
                        + " in a row, clear of the others): published under its id", stream, id, frame,
                        frame - k.lostFrame, foundAfter);
            }
        }
        for (Integer id : List.copyOf(remembered.keySet())) {
            Remembered k = remembered.get(id);
            if (!o.lostNow.contains(id) && k.frames >= forgetAfter) {
                remembered.remove(id);
                p.stream().remove(id);
                log.info("stream {}: object {} forgotten at frame {}: not found again within {} frames of being lost;"
                        + " its memory is dropped", stream, id, frame, forgetAfter);
            }
        }
        List<MaskReadout.Readout> masks = new ArrayList<>();
        List<Integer> hiddenIds = new ArrayList<>();
        for (Integer id : current.keySet()) {
            MaskReadout.Readout m = o.shown.get(id);
            if (m != null) {
                masks.add(m);
            }
            if (o.hiddenIds.contains(id)) {
                hiddenIds.add(id);
            }
        }
        meters.active().set(p.stream().objects().size() - remembered.size());
        keepState(frame);
        return new TrackedFrame(masks, hiddenIds, lostIds);
    }

    /** A mask claimed after the frame's shown objects: by an object back from hidden ({@code lost} null) or a lost one. */
    private record Claim(int id, ObjectResult result, MaskSummary mask, Remembered lost) {}

    /** What {@link #finish} makes of a frame's objects so far. */
    private final class Outcome {
        final long frame;
        final Pending p;
        final List<Integer> lostIds;
        final Map<Integer, MaskReadout.Readout> shown = new HashMap<>();
        final Set<Integer> hiddenIds = new HashSet<>();
        final Set<Integer> lostNow = new HashSet<>();
        /** The masks shown, and those lost objects saw clear, on this frame. */
        final List<MaskSummary> taken = new ArrayList<>();

        Outcome(long frame, Pending p, List<Integer> lostIds) {
            this.frame = frame;
            this.p = p;
            this.lostIds = lostIds;
        }

        void show(int id, ObjectResult r, MaskSummary m, boolean take) {
            shown.put(id, new MaskReadout.Readout(id, finite(r.predictedIou()), m));
            if (take) {
                taken.add(m);
            }
            int[] b = m.box();
            lastBox.put(id, new double[] {b[0], b[1], b[2], b[3]});
        }

        /** A tracked object's frame: shown when {@code visible}, else hidden, lost after hiddenLostAfter. */
        void observe(int id, ObjectResult r, MaskSummary m, boolean visible) {
            switch (hidden.observe(id, visible)) {
                case VISIBLE -> show(id, r, m, true);
                case HIDDEN -> hiddenIds.add(id);
                case LOST -> {
                    lostIds.add(id);
                    lostNow.add(id);
                    ended.put(id, revisions.remove(id));
                    lastBox.remove(id);
                    meters.lost().increment();
                    if (forgetAfter > 0) {
                        remembered.put(id, new Remembered(frame));
                    } else {
                        p.stream().remove(id);
                    }
                    log.info("stream {}: object {} lost at frame {}: not visible for {} frames in a row{}", stream, id,
                            frame, hiddenLostAfter, forgetAfter > 0 ? "; its memory is kept " + forgetAfter
                                    + " frames to find it again" : "");
                }
            }
        }
    }

    /**
     * Drops the memory of every lost object of a {@link #prepare}d frame's stream that was kept to find it again,
     * before the model's call (a tracker that refused the frame for its object limit can then take it); they stay
     * lost. The number forgotten.
     */
    public synchronized int forgetRemembered(Pending p) {
        int n = remembered.size();
        for (Integer id : remembered.keySet()) {
            p.stream().remove(id);
        }
        remembered.clear();
        if (n > 0) {
            log.info("stream {}: {} lost object(s) forgotten at frame {} to make room for new ones", stream, n,
                    p.frame());
        }
        return n;
    }

    /** Drops every object's memory (the stream stopped); waits for a step under way. */
    @Override
    public synchronized void close() {
        tracker.close();
    }

    /** Keeps its state after every {@code every}-th frame (0: never) for {@link #takeState}. */
    @Override
    public void keepStateEvery(int every) {
        this.stateEvery = every;
    }

    /** The state kept after {@code frame}, if one was; forgets it and every older one. */
    @Override
    public Optional<MemoryTrackerState> takeState(long frame) {
        synchronized (states) {
            MemoryTrackerState s = states.get(frame);
            states.headMap(frame, true).clear();
            return Optional.ofNullable(s);
        }
    }

    private void keepState(long frame) {
        if (stateEvery > 0 && frame % stateEvery == 0) {
            MemoryTrackerState s = state(frame);
            synchronized (states) {
                states.put(frame, s);
            }
        }
    }

    /** Its state after {@code frame}; only while no frame is being stepped (or on the stepping thread). */
    public MemoryTrackerState state(long frame) {
        List<MemoryTrackerState.ObjectState> objects = new ArrayList<>();
        for (Integer id : tracker.objects()) {
            if (remembered.containsKey(id)) {
                continue; // lost: among the ended ones
            }
            objects.add(new MemoryTrackerState.ObjectState(id, revisions.getOrDefault(id, 0L), lastBox.get(id),
                    hidden.hiddenFor(id)));
        }
        return new MemoryTrackerState(frame, generation, objects, ended);
    }

    @Override
    public Optional<MemoryTrackerState> stateAfter(long frame) {
        return Optional.of(state(frame));
    }

    /** A memory-mode state is restored ({@link #restore}); another mode's is not this tracker's: it starts afresh. */
    @Override
    public void takeUp(TrackingState state) {
        if (state instanceof MemoryTrackerState s) {
            restore(s);
        } else {
            log.info("stream {}: its stored {} state is not memory mode's: its objects start from their prompts",
                    stream, state.key());
        }
    }

    /** Takes up the state another engine's tracker of the stream had (failover); before the first frame. */
    public void restore(MemoryTrackerState s) {
        if (stepped) {
            throw new IllegalStateException("stream " + stream + ": objects are restored before the first frame only");
        }
        restored = s;
    }

    /** The restored objects: visible ones resume from their last box, hidden ones are lost by the move. */
    private void takeUp(MemoryTrackerState s) {
        ended.putAll(s.ended());
        for (MemoryTrackerState.ObjectState o : s.objects()) {
            revisions.put(o.id(), o.revision());
            if (o.box() != null && o.hiddenFrames() == 0) {
                resume.put(o.id(), o.box());
            } else {
                revisions.remove(o.id());
                ended.put(o.id(), o.revision());
                lostByMove.add(o.id());
            }
        }
        log.info("stream {}: took up object(s) {} from frame {}: {} resume from their last box, {} hidden at the move"
                + " are lost", stream, s.ids(), s.frame(), resume.size(), lostByMove.size());
    }

    /** A configuration / topic prompt (frame pixels) in the model's input pixels: box first, then points. */
    static ObjectPrompt modelPrompt(PromptSpec.ObjectPrompt o, int s, int width, int height) {
        float sx = (float) s / width;
        float sy = (float) s / height;
        float[] box = o.box() == null ? null : new float[] {(float) o.box()[0] * sx, (float) o.box()[1] * sy,
            (float) o.box()[2] * sx, (float) o.box()[3] * sy};
        float[][] points = null;
        int[] labels = null;
        if (o.points() != null && o.points().length > 0) {
            points = new float[o.points().length][];
            labels = new int[o.points().length];
            for (int i = 0; i < points.length; i++) {
                double[] p = o.points()[i];
                points[i] = new float[] {(float) p[0] * sx, (float) p[1] * sy};
                labels[i] = p.length > 2 ? (int) p[2] : 1;
            }
        }
        return new ObjectPrompt(o.id(), box, points, labels);
    }

    private static float finite(float v) {
        return Float.isFinite(v) ? v : 0f;
    }
}
