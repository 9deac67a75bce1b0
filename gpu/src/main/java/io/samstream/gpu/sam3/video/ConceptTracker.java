package io.samstream.gpu.sam3.video;

import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.VisionFeatures;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * One concept's objects on one stream, stepped frame after frame: what Meta's {@code Sam3VideoBase._det_track_one_frame}
 * does for a frame of a session with that text prompt, in the same order:
 * <ol>
 *   <li>every track is propagated by the tracker from its memory ({@link MemoryPicker}), its mask's small holes
 *       filled;</li>
 *   <li>on a detection frame: the concept's detections, matched to the tracks ({@link Association}); unmatched
 *       confident ones become new objects with new ids (ascending detection order, the lowest scores dropped beyond
 *       the stream's object limit); the hot-start rule ({@link Hotstart}) removes young unmatched or duplicate
 *       tracks; on every {@code reconditionEvery}-th frame a track whose object score logit passes 0.8 and that a
 *       confident detection overlaps by IoU 0.8 is re-conditioned on that detection's mask;</li>
 *   <li>overlapping tracks recently occluded are suppressed ({@link OcclusionSuppression});</li>
 *   <li>each track's memory of the frame is encoded from its mask (after the pixel-wise shrinkage rule across the
 *       concept's tracks), new objects get their first memory ({@link NewObjects}), removed tracks go, and every
 *       memory is pruned to what later frames read;</li>
 *   <li>the frame's masks are published ({@link FrameOutputs}) and each track's visibility counted: {@code lostAfter}
 *       frames in a row without a mask make it lost (reported once), {@code forgetAfter} more drop it.</li>
 * </ol>
 * On frames without detection (the cadence) the tracks are only propagated, remembered and published: a frame the
 * detector skipped says nothing about matches, so it counts for no heuristic. The detection of step 2 reads only the
 * frame, so it starts before step 1 and runs beside it ({@link Overlap}); the results are the same either way.
 */
final class ConceptTracker {
    /** Meta's {@code HIGH_CONF_THRESH} for the tracker's object score logit when re-conditioning. */
    static final float RECONDITION_SCORE = 0.8f;

    private final Concept concept;
    private final TrackerPasses model;
    private final CpuThreadPool pool;
    private final ConceptDetector detector;
    private final Overlap overlap;
    private final Sam3VideoSettings settings;
    private final MemoryPicker picker;
    private final Hotstart hotstart;
    private final OcclusionSuppression occlusion;
    private final List<Track> tracks = new ArrayList<>();
    private boolean started;

    /** What a frame gave for this concept. */
    record Result(List<TrackedObject> objects, List<Long> hidden, List<Long> lost, List<Long> dropped) {}

    ConceptTracker(Concept concept, TrackerPasses model, CpuThreadPool pool, ConceptDetector detector,
            Overlap overlap, Sam3VideoSettings settings) {
        this.concept = concept;
        this.model = model;
        this.pool = pool;
        this.detector = detector;
        this.overlap = overlap;
        this.settings = settings;
        this.picker = new MemoryPicker(settings.memorySelection(), model.config().numMaskmem(),
                settings.pointerWindow(), settings.memorySelectionThreshold());
        this.hotstart = new Hotstart(settings.hotstartDelay(), settings.hotstartUnmatched(),
                settings.hotstartDuplicates());
        this.occlusion = new OcclusionSuppression(settings.occlusionIou());
    }

    Concept concept() {
        return concept;
    }

    int size() {
        return tracks.size();
    }

    List<Track> tracks() {
        return tracks;
    }

    /**
     * Frame {@code t}: {@code detect} whether the detector runs (the concept's first frame always), {@code capacity}
     * how many new objects the stream may still take, {@code ids} the stream's id source.
     */
    /** Whether it has had its first frame (the detector runs on a concept's first frame whatever the cadence). */
    boolean started() {
        return started;
    }

    Result step(int t, VisionFeatures vision, TrackerFrame f, int width, int height, boolean detect, int capacity,
            LongSupplier ids) {
        Sam3TrackerConfig c = model.config();
        int low = c.lowResSize();
        boolean firstFrame = !started;
        started = true;
        detect |= firstFrame;
        int n = tracks.size();
        List<Long> trackIds = new ArrayList<>();
        float[] trackScores = new float[n];
        Propagation[] props = new Propagation[n];
        float[][] masks = new float[n][];
        List<Sam3TrackerModel.Reads> reads = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Track tr = tracks.get(i);
            trackIds.add(tr.id);
            trackScores[i] = tr.score;
            MemoryPicker.Picked p = picker.pick(tr.memory, t);
            reads.add(new Sam3TrackerModel.Reads(p.spatial(), p.pointers()));
        }
        // the detection reads the frame and nothing of the tracks: it runs beside their propagation (Overlap)
        Overlap.Pending<List<Detection>> detecting = detect
                ? overlap.start(() -> detector.detect(vision, concept, firstFrame)) : null;
        try {
            if (n > 0) {
                List<Propagation> got = model.propagateAll(pool, f, reads, picker.window());
                for (int i = 0; i < n; i++) {
                    props[i] = got.get(i);
                }
            }
            pool.forEach(n, i -> masks[i] = HoleFilling.fill(props[i].lowRes(), low, low, settings.fillHoleArea()));
        } catch (RuntimeException | Error e) {
            if (detecting != null) {
                detecting.abandon(e); // the caller releases the frame next: the detection must be done with it
            }
            throw e;
        }

        List<Detection> fresh = new ArrayList<>();
        List<Long> freshIds = new ArrayList<>();
        Set<Long> removed = new HashSet<>();
        List<int[]> recondition = new ArrayList<>();
        List<Detection> dets = List.of();
        if (detect) {
            dets = detecting.join();
            List<PackedMask> detBins = new ArrayList<>(dets.size());
            float[] scores = new float[dets.size()];
            for (int d = 0; d < dets.size(); d++) {
                detBins.add(dets.get(d).bits());
                scores[d] = dets.get(d).score();
            }
            PackedMask[] trackBins = new PackedMask[n];
            pool.forEach(n, i -> trackBins[i] = PackedMask.of(masks[i]));
            Association a = Association.of(detBins, scores, List.of(trackBins), settings.assocIou(),
                    settings.trackAssocIou(), settings.newDetectionThreshold());
            List<Integer> chosen = new ArrayList<>(a.newDetections());
            if (chosen.size() > capacity) {
                chosen.sort(Comparator.comparingDouble((Integer d) -> -scores[d]));
                chosen = new ArrayList<>(chosen.subList(0, Math.max(capacity, 0)));
            }
            for (int d : chosen) {
                fresh.add(dets.get(d));
                freshIds.add(ids.getAsLong());
            }
            List<Long> unmatched = new ArrayList<>();
            for (int ti : a.unmatchedTracks()) {
                unmatched.add(trackIds.get(ti));
            }
            List<List<Long>> matched = new ArrayList<>();
            for (List<Integer> m : a.matches().values()) {
                List<Long> idsOf = new ArrayList<>();
                for (int ti : m) {
                    idsOf.add(trackIds.get(ti));
                }
                matched.add(idsOf);
            }
            removed = hotstart.step(t, freshIds, unmatched, matched);
            if (settings.reconditionEvery() > 0 && t % settings.reconditionEvery() == 0) {
                for (Map.Entry<Integer, Integer> e : a.highConfidence().entrySet()) {
                    if (props[e.getKey()].objectScore() > RECONDITION_SCORE) {
                        recondition.add(new int[] {e.getKey(), e.getValue()});
                    }
                }
            }
        }

        occlusion.apply(t, trackIds, masks, removed);
        remember(t, f, props, masks, removed, recondition, dets);
        start(t, f, fresh, freshIds, width, height);

        List<Long> dropped = new ArrayList<>();
        for (int i = n - 1; i >= 0; i--) {
            if (removed.contains(tracks.get(i).id)) {
                drop(tracks.get(i));
                dropped.add(0, trackIds.get(i));
            }
        }
        FrameOutputs.Frame out = FrameOutputs.build(pool, concept, trackIds, trackScores, props, masks, removed, fresh,
                freshIds, low, width, height, settings.fillHoleArea());
        return visibility(t, out, dropped);
    }

    /** Memory of the frame for every track still tracked; re-conditioned cohorts made conditioning here. */
    private void remember(int t, TrackerFrame f, Propagation[] props, float[][] masks, Set<Long> removed,
            List<int[]> recondition, List<Detection> dets) {
        int n = props.length;
        if (n == 0) {
            return;
        }
        Sam3TrackerConfig c = model.config();
        int low = c.lowResSize();
        int side = c.maskSize();
        boolean[] kept = new boolean[n];
        for (int i = 0; i < n; i++) {
            kept[i] = !removed.contains(tracks.get(i).id);
        }
        List<FeatureMap> memories = model.encodeTrackedMemories(pool, f, masks, kept);
        Set<Cohort> cohorts = new java.util.LinkedHashSet<>();
        for (int i = 0; i < n; i++) {
            if (!kept[i]) {
                continue;
            }
            Track tr = tracks.get(i);
            tr.memory.addTracked(t, memories.get(i), props[i].pointer(), props[i].memoryScore());
            cohorts.add(tr.cohort);
        }
        cohorts.forEach(co -> co.score(t));
        java.util.Map<Track, float[]> newPointers = new java.util.LinkedHashMap<>();
        for (int[] rc : recondition) {
            Track tr = tracks.get(rc[0]);
            if (removed.contains(tr.id)) {
                continue;
            }
            float[] up = MaskResize.bilinear(dets.get(rc[1]).maskLogits(), low, low, side, side);
            newPointers.put(tr, model.pointerFromMask(pool, f, MaskOverlaps.binary(up)));
        }
        Set<Cohort> promoted = new java.util.LinkedHashSet<>();
        for (Track tr : newPointers.keySet()) {
            promoted.add(tr.cohort);
        }
        for (Cohort co : promoted) {
            for (Track m : co.members) {
                if (m.memory.tracked(t) != null) {
                    m.memory.promote(t, newPointers.get(m));
                }
            }
        }
    }

    /** New objects of this frame, one cohort. */
    private void start(int t, TrackerFrame f, List<Detection> fresh, List<Long> freshIds, int width, int height) {
        if (fresh.isEmpty()) {
            return;
        }
        NewObjects.Start[] starts = NewObjects.start(pool, model, f, fresh, width, height);
        Cohort cohort = new Cohort();
        for (int j = 0; j < fresh.size(); j++) {
            ObjectMemory memory = new ObjectMemory(Sam3TrackerConfig.MAX_CONDITIONING_FRAMES);
            memory.addConditioning(t, starts[j].features(), starts[j].pointer());
            Track tr = new Track(freshIds.get(j), fresh.get(j).score(), t, cohort, memory);
            cohort.members.add(tr);
            tracks.add(tr);
        }
    }

    private Result visibility(int t, FrameOutputs.Frame out, List<Long> dropped) {
        Set<Long> shown = new HashSet<>();
        for (TrackedObject o : out.objects()) {
            shown.add(o.id());
        }
        List<Long> hidden = new ArrayList<>();
        List<Long> lost = new ArrayList<>();
        List<Track> forgotten = new ArrayList<>();
        for (Track tr : tracks) {
            if (shown.contains(tr.id)) {
                tr.hiddenFor = 0;
                continue;
            }
            tr.hiddenFor++;
            if (tr.hiddenFor < settings.lostAfter()) {
                hidden.add(tr.id);
            } else if (tr.hiddenFor == settings.lostAfter()) {
                lost.add(tr.id);
            }
            if (tr.hiddenFor >= settings.lostAfter() + settings.forgetAfter()) {
                forgotten.add(tr);
            }
        }
        for (Track tr : forgotten) {
            drop(tr);
            dropped.add(tr.id);
        }
        for (Track tr : tracks) {
            picker.prune(tr.memory, t);
        }
        return new Result(out.objects(), hidden, lost, dropped);
    }

    /** Ends a track: its memory (released), its place in its cohort, its heuristics' records. */
    private void drop(Track tr) {
        tr.memory.release();
        tracks.remove(tr);
        tr.cohort.remove(tr);
        hotstart.forget(tr.id);
        occlusion.forget(tr.id);
    }

    /**
     * Releases every track's memory ({@link FeatureMap#release}: a GPU's slots go back at once rather than when the
     * garbage collector finds them): for whoever ends this concept's tracking (the concept no longer asked for, the
     * stream closed). The tracks are not stepped again after it.
     */
    void release() {
        for (Track tr : tracks) {
            tr.memory.release();
        }
    }

    /** Every track's memory, in floats (for the bounded-memory checks). */
    long heldFloats() {
        long n = 0;
        for (Track tr : tracks) {
            n += tr.memory.heldFloats();
        }
        return n;
    }

    /** Records the heuristics keep (bounded by the objects tracked and those within the hot-start delay). */
    int bookkeeping() {
        return hotstart.size() + occlusion.size();
    }
}
