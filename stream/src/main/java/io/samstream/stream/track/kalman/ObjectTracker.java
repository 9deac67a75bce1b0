package io.samstream.stream.track.kalman;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.EmbeddingPool;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.Discovery;
import io.samstream.stream.track.FrameGeometry;
import io.samstream.stream.track.FrameStep;
import io.samstream.stream.track.MaskReadout;
import io.samstream.stream.track.TrackPrompts;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.TrackingMeters;
import io.samstream.stream.track.TrackingState;
import io.samstream.stream.track.Wave;
import io.samstream.stream.track.WaveTracker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kalman mode for one stream. Each frame it seeds new or changed prompts and follows every live track where its filter
 * predicts it ({@link FollowPrompts}); the frame decodes with the other streams' frames ({@link #begin}, {@link Wave});
 * then the tracks are settled by its collaborators: {@link SceneCuts}, {@link Occlusion}, {@link Plausibility},
 * {@link Duplicates}, {@link ExclusivePixels}, {@link CoveredObjects}, {@link Reidentification} with {@link
 * AppearanceSearch}, and {@link NewObjects} on key frames. A mask that is empty, scores below the minimums or fails a
 * rule is a bad frame: the track coasts (listed hidden) and is lost after {@code lost-after} bad frames nothing
 * explains, or {@code hidden-lost-after} in all. Removed prompts end their tracks; a reset or a new frame size starts
 * over. Frames come in order, one at a time; the state is this stream's alone.
 */
public final class ObjectTracker implements WaveTracker {
    private static final Logger log = LoggerFactory.getLogger(ObjectTracker.class);

    private final String stream;
    private final SamBackend backend;
    private final EngineSettings.Tracking settings;
    private final TrackingMeters meters;
    private final MaskReadout readout;
    private final FollowPrompts prompter;
    private final SceneCuts sceneCuts;
    private final CoveredObjects covers;
    private final Plausibility plausibility;
    private final Duplicates duplicates;
    private final ExclusivePixels exclusivePixels;
    /** Lost tracks that may still come back ({@code reid-window}). */
    private final Reidentification reid;
    private final AppearanceSearch appearanceSearch;
    /** Discovery's novelty rule; null without discovery. */
    private final NewObjects newObjects;
    /** The most objects discovery fills the stream up to ({@link Discovery#maxObjects}); whether it is there. */
    private final int discoveryLimit;
    private boolean full;
    /** The frame begun and not yet finished (frames are one at a time). */
    private Step open;
    /** Live tracks by id, in the order they were made. */
    private final Map<Integer, Track> tracks = new LinkedHashMap<>();
    /** Prompted ids whose track ended (lost or merged), with the revision that did: not seeded again. */
    private final Map<Integer, Long> ended = new HashMap<>();
    /** What {@link #tracks()} shows: the live tracks after the last frame. */
    private volatile List<Track> published = List.of();
    private FrameGeometry geometry;
    /** The last frame's image mean: what the next frame's {@link AppearanceSearch} compares against. */
    private float[] lastImageMean;
    /** The image's motion from frame to frame; made at the first frame when {@code camera-motion} is on. */
    private CameraMotion camera;
    private long generation;
    private long frames;
    private int discovered;

    /**
     * @param discovery null for none
     */
    public ObjectTracker(String stream, SamBackend backend, EngineSettings.Tracking settings, Discovery discovery,
            TrackingMeters meters) {
        this(stream, backend, settings, discovery, meters, true);
    }

    /** @param centroidPoint whether followed objects get the centroid point (off only to measure what it buys) */
    ObjectTracker(String stream, SamBackend backend, EngineSettings.Tracking settings, Discovery discovery,
            TrackingMeters meters, boolean centroidPoint) {
        this.stream = stream;
        this.backend = backend;
        this.settings = settings;
        this.meters = meters;
        this.readout = new MaskReadout(backend);
        this.prompter = new FollowPrompts(centroidPoint);
        this.sceneCuts = new SceneCuts(settings.sceneCutSimilarity());
        this.covers = new CoveredObjects(settings);
        this.plausibility = new Plausibility(settings.minAppearance());
        this.duplicates = new Duplicates(stream, settings.mergeIou());
        this.exclusivePixels = new ExclusivePixels(stream, settings);
        this.reid = new Reidentification(settings);
        this.appearanceSearch = new AppearanceSearch(stream, backend, settings);
        this.newObjects = discovery == null ? null : new NewObjects(discovery, readout);
        this.discoveryLimit = discovery == null ? 0 : discovery.maxObjects();
    }

    /**
     * The live tracks after the last frame, in the order they were made. Safe from any thread (a
     * published copy; the tracks' own state belongs to the tracking thread).
     */
    public List<Track> tracks() {
        return published;
    }

    @Override
    public boolean tracksDiscovered(int id) {
        return published.stream().anyMatch(t -> t.id() == id);
    }

    // Failover (TrackerState): taken on the tracking thread after every snapshotEvery-th frame.
    private volatile int snapshotEvery;
    private final ConcurrentSkipListMap<Long, TrackerState> states = new ConcurrentSkipListMap<>();

    /** Keep a {@link TrackerState} after each frame whose index is a multiple of {@code frames} (0: none). */
    @Override
    public void keepStateEvery(int frames) {
        snapshotEvery = frames;
    }

    /** The state kept after {@code frame}, if one was; forgets it and every older one. */
    @Override
    public Optional<TrackerState> takeState(long frame) {
        TrackerState s = states.get(frame);
        states.headMap(frame, true).clear();
        return Optional.ofNullable(s);
    }

    private void keepState(long frame) {
        int every = snapshotEvery;
        if (every > 0 && frame % every == 0) {
            states.put(frame, state(frame));
        }
    }

    /** Its state after {@code frame}; only while no frame is being tracked (or on the tracking thread). */
    public TrackerState state(long frame) {
        return new TrackerState(frame, generation, frames, discovered,
                tracks.values().stream().map(Track::export).toList(), ended,
                reid.ghosts().stream().map(g -> new TrackerState.GhostState(g.track().export(), g.lostFrame())).toList());
    }

    @Override
    public Optional<TrackerState> stateAfter(long frame) {
        return Optional.of(state(frame));
    }

    /** A kalman-mode state is restored ({@link #restore}); another mode's is not this tracker's: it starts afresh. */
    @Override
    public void takeUp(TrackingState state) {
        if (state instanceof TrackerState s) {
            restore(s);
        } else {
            log.info("stream {}: its stored {} state is not kalman mode's: its tracks start afresh", stream,
                    state.key());
        }
    }

    /** Takes up a state another tracker of the stream had (failover); before the first frame. */
    public void restore(TrackerState s) {
        if (open != null || frames > 0) {
            throw new IllegalStateException("stream " + stream + ": tracks are restored before the first frame only");
        }
        tracks.clear();
        s.tracks().forEach(t -> tracks.put(t.id(), Track.restore(t)));
        ended.clear();
        ended.putAll(s.ended());
        reid.clear();
        s.ghosts().forEach(g -> reid.takeUp(Track.restore(g.track()), g.lostFrame()));
        generation = s.generation();
        frames = s.framesTracked();
        discovered = s.discovered();
        published = List.copyOf(tracks.values());
        log.info("stream {}: took up {} track(s) {} and {} lost one(s) still probed from frame {}", stream, tracks.size(),
                s.ids(), reid.ghosts().size(), s.frame());
    }

    /**
     * Tracks one frame.
     *
     * @param frame     the frame's index (for logs and the age of tracks)
     * @param embedding the frame's image embedding {@code [1, C, E, E]}
     * @param prompts   the stream's prompted objects for this frame
     * @throws IllegalArgumentException when a prompt lies outside the frame (names the object)
     */
    public TrackedFrame step(long frame, int width, int height, Tensor embedding, TrackPrompts prompts) {
        return step(frame, width, height, ImageEmbedding.of(embedding), prompts);
    }

    /** As {@link #step(long, int, int, Tensor, TrackPrompts)}, on an embedding wherever the backend keeps it. */
    public TrackedFrame step(long frame, int width, int height, ImageEmbedding embedding, TrackPrompts prompts) {
        return Wave.runOne(backend, begin(frame, width, height, embedding, prompts));
    }

    /**
     * Begins one frame: plans its seeds and followed tracks; the returned step decodes them (with other
     * streams' frames, {@link Wave}) and settles the tracks. Frames are begun and finished one at a time.
     *
     * @throws IllegalArgumentException when a prompt lies outside the frame (names the object)
     * @throws IllegalStateException    when the previous frame was begun and not finished
     */
    @Override
    public FrameStep begin(long frame, int width, int height, ImageEmbedding embedding, TrackPrompts prompts) {
        if (open != null) {
            throw new IllegalStateException("stream " + stream + ": frame " + open.frame + " is still being tracked");
        }
        if (geometry == null || !geometry.sameFrameSize(width, height)) {
            if (geometry != null) {
                log.info("stream {}: frame size changed to {}x{} at frame {}: tracking starts over", stream, width,
                        height, frame);
                tracks.clear();
                ended.clear();
                reid.clear();
            }
            geometry = new FrameGeometry(width, height, backend.config().imageSize(), backend.config().lowResSize());
        }
        if (prompts.generation() != generation) {
            log.info("stream {}: prompts reset at frame {}: {} track(s) end, the configured objects are seeded again",
                    stream, frame, tracks.size());
            tracks.clear();
            ended.clear();
            reid.clear();
            generation = prompts.generation();
        }
        followCamera(frame, embedding);
        open = new Step(frame, embedding, plan(frame, prompts, embedding));
        return open;
    }

    /**
     * Camera motion ({@code camera-motion}, {@link CameraMotion}): moves every track's filter, live or lost, by the
     * image's shift since the previous frame, before the filters predict this frame's boxes.
     */
    private void followCamera(long frame, ImageEmbedding embedding) {
        if (!settings.cameraMotion()) {
            return;
        }
        if (camera == null) {
            camera = new CameraMotion(backend.embeddingMatcher(CameraMotion.RANGE));
        }
        double cell = (double) backend.config().imageSize() / backend.config().embeddingSize();
        int cols = (int) Math.ceil(geometry.resized().width() / cell);
        int rows = (int) Math.ceil(geometry.resized().height() / cell);
        double[] shift = camera.step(embedding, cols, rows);
        if (shift[0] == 0 && shift[1] == 0) {
            return;
        }
        double dx = shift[0] * cell * geometry.width() / geometry.resized().width();
        double dy = shift[1] * cell * geometry.height() / geometry.resized().height();
        for (Track t : tracks.values()) {
            t.filter().shift(dx, dy);
        }
        for (Reidentification.Ghost g : reid.ghosts()) {
            g.track().filter().shift(dx, dy);
        }
        log.debug("stream {}: the image moved by ({}, {}) px at frame {}", stream,
                String.format(Locale.ROOT, "%.1f", dx), String.format(Locale.ROOT, "%.1f", dy),
                frame);
    }

    /** Frees the camera-motion matcher's copy of the last embedding (device memory on the CUDA backend). */
    @Override
    public void close() {
        if (camera != null) {
            camera.close();
            camera = null;
        }
    }

    /** One frame in progress: its jobs, their decoder requests (single mask, then multimask), their masks. */
    private final class Step implements FrameStep {
        final long frame;
        final ImageEmbedding embedding;
        final List<Work> work;
        final List<Work> single = new ArrayList<>();
        final List<Work> multi = new ArrayList<>();
        List<MaskReadout.Item> items;
        /** The jobs whose masks are pooled, in the order of {@link #pools}; the image's descriptor comes last. */
        List<Work> pooledWork = List.of();
        /** The whole image's mean embedding, and its layout ({@link SceneCuts#layout}). */
        float[] imageMean;
        float[] layout;

        Step(long frame, ImageEmbedding embedding, List<Work> work) {
            this.frame = frame;
            this.embedding = embedding;
            this.work = work;
            for (Work w : work) {
                (w.multimask ? multi : single).add(w);
            }
        }

        private List<List<Work>> groups() {
            List<List<Work>> g = new ArrayList<>(2);
            for (List<Work> group : List.of(single, multi)) {
                if (!group.isEmpty()) {
                    g.add(group);
                }
            }
            return g;
        }

        @Override
        public List<SamBackend.DecodeRequest> requests() {
            List<SamBackend.DecodeRequest> r = new ArrayList<>(2);
            for (List<Work> group : groups()) {
                r.add(new SamBackend.DecodeRequest(embedding, group.stream().map(w -> w.prompt).toList(), group == multi));
            }
            return r;
        }

        @Override
        public void decoded(List<List<DecoderOutput>> outputs) {
            List<List<Work>> groups = groups();
            for (int g = 0; g < groups.size(); g++) {
                List<Work> group = groups.get(g);
                List<DecoderOutput> out = outputs.get(g);
                if (out.size() != group.size()) {
                    throw new IllegalStateException(backend.name() + " returned " + out.size() + " outputs for "
                            + group.size() + " prompt sets");
                }
                for (int i = 0; i < group.size(); i++) {
                    FollowPrompts.choose(group.get(i), out.get(i));
                }
            }
            items = new ArrayList<>(work.size());
            for (Work w : work) {
                items.add(new MaskReadout.Item(w.id, w.plane, w.score));
            }
        }

        @Override
        public List<EmbeddingPool.Request> pools() {
            int side = backend.config().embeddingSize();
            pooledWork = new ArrayList<>(work.size());
            List<EmbeddingPool.Request> r = new ArrayList<>(work.size() + 1);
            for (Work w : work) {
                if (w.mask != null && LowResMask.area(w.mask) > 0) {
                    pooledWork.add(w);
                    r.add(new EmbeddingPool.Request(embedding, LowResMask.cellWeights(w.mask, geometry.lowResSize(),
                            side)));
                }
            }
            r.add(new EmbeddingPool.Request(embedding, geometry.imageCells(side)));
            for (float[] region : geometry.imageRegions(side, SceneCuts.REGIONS)) {
                r.add(new EmbeddingPool.Request(embedding, region));
            }
            return r;
        }

        @Override
        public void pooled(List<float[]> descriptors) {
            int image = pooledWork.size();
            imageMean = descriptors.get(image);
            lastImageMean = imageMean;
            layout = SceneCuts.layout(imageMean, descriptors.subList(image + 1, descriptors.size()));
            for (int i = 0; i < pooledWork.size(); i++) {
                pooledWork.get(i).look = descriptors.get(i);
            }
        }

        @Override
        public SamBackend.MaskRequest masks() {
            return items.isEmpty() ? null : MaskReadout.request(items, geometry);
        }

        @Override
        public TrackedFrame finish(List<MaskSummary> summaries) {
            open = null;
            List<MaskReadout.Readout> reads = items.isEmpty() ? List.of()
                    : MaskReadout.readouts(items, geometry, summaries);
            for (int i = 0; i < work.size(); i++) {
                work.get(i).read = reads.get(i);
            }
            List<Integer> lost = new ArrayList<>();
            List<Work> kept = settle(frame, work, lost, imageMean, layout);
            List<MaskReadout.Readout> objects = new ArrayList<>(kept.size());
            List<Integer> hidden = new ArrayList<>();
            for (Work w : kept) {
                if (w.good) {
                    objects.add(w.read);
                } else {
                    hidden.add(w.id); // coasting: no mask published, but still followed
                }
            }
            if (newObjects != null && newObjects.keyFrame(frames)) {
                // A jumped mask is another object's: it does not cover anything of its own.
                discover(frame, embedding, kept.stream().filter(w -> !w.jumped).toList(), objects);
            }
            frames++;
            published = List.copyOf(tracks.values());
            meters.active().set(tracks.size());
            keepState(frame);
            return new TrackedFrame(objects, hidden, lost);
        }
    }

    /** The frame's jobs: seeds and followed tracks of prompted objects in prompt order, then discovered tracks. */
    private List<Work> plan(long frame, TrackPrompts prompts, ImageEmbedding embedding) {
        Set<Integer> prompted = new HashSet<>();
        for (TrackPrompts.Seed s : prompts.objects()) {
            prompted.add(s.prompt().id());
        }
        tracks.values().removeIf(t -> {
            boolean removed = t.origin() == Track.Origin.PROMPTED ? !prompted.contains(t.id())
                    : prompts.dismissed().contains(t.id());
            if (removed) {
                log.info("stream {}: object {} removed at frame {}: its track ends", stream, t.id(), frame);
            }
            return removed;
        });
        ended.keySet().retainAll(prompted);
        List<Work> work = new ArrayList<>();
        for (TrackPrompts.Seed s : prompts.objects()) {
            int id = s.prompt().id();
            Track t = tracks.get(id);
            if (t != null && t.revision() == s.revision()) {
                work.add(prompter.follow(t, geometry));
            } else if (t == null && Long.valueOf(s.revision()).equals(ended.get(id))) {
                continue; // lost or merged under this prompt: it stays gone until the prompt changes
            } else {
                tracks.remove(id);
                ended.remove(id);
                work.add(FollowPrompts.seed(s, geometry));
            }
        }
        for (Track t : tracks.values()) {
            if (t.origin() == Track.Origin.DISCOVERED) {
                work.add(prompter.follow(t, geometry));
            }
        }
        Set<Integer> seeded = new HashSet<>();
        for (Work w : work) {
            if (w.track == null) {
                seeded.add(w.id);
            }
        }
        reid.expire(frame, t -> seeded.contains(t.id()) || (t.origin() == Track.Origin.PROMPTED
                ? !prompted.contains(t.id()) : prompts.dismissed().contains(t.id())));
        List<Reidentification.Ghost> probed = new ArrayList<>();
        for (Reidentification.Ghost g : reid.ghosts()) {
            if (covers.coasting(g.track())) {
                work.add(prompter.coast(g.track(), geometry));
            } else {
                work.add(FollowPrompts.probe(g.track(), g.track().box(), geometry));
                probed.add(g);
            }
        }
        // The appearance search's probes, where it leads.
        for (AppearanceSearch.Lead l : appearanceSearch.search(frame, probed, embedding, work, geometry,
                lastImageMean)) {
            Work w = FollowPrompts.probe(l.track(), l.box(), geometry);
            w.search = true;
            work.add(w);
        }
        return work;
    }

    /**
     * Updates the tracks with the frame's masks, merges duplicates, ends lost tracks; returns the live tracks'
     * jobs, good ({@link Work#good}) or coasting.
     */
    private List<Work> settle(long frame, List<Work> all, List<Integer> lost, float[] imageMean, float[] layout) {
        List<Work> work = all.stream().filter(w -> !w.probe).toList();
        List<Work> probes = all.stream().filter(w -> w.probe).toList();
        Set<Work> gone = sceneCut(frame, work, layout, lost);
        Set<Work> jumped = Occlusion.jumped(work);
        Set<Work> seeded = new HashSet<>();
        for (Work w : work) {
            if (w.track == null) {
                w.track = new Track(w.id, Track.Origin.PROMPTED, w.revision, frame, w.chosen,
                        w.read.empty() ? extent(w.seed) : w.read.box());
                tracks.put(w.id, w.track);
                seeded.add(w);
            }
        }
        jumped.addAll(Occlusion.inside(work, gone, jumped));
        Map<Work, String> unlike = plausibility.unlike(work, gone, jumped, imageMean, geometry);
        unlike.forEach((w, why) -> log.debug("stream {}: object {} at frame {}: its mask is not the object ({}): a bad "
                + "frame", stream, w.id, frame, why));
        Set<Work> strange = unlike.keySet();
        jumped.addAll(strange);
        for (Work w : duplicates.resolve(frame, work, gone, jumped)) {
            end(w.track);
            lost.add(w.id);
            meters.lost().increment();
        }
        exclusivePixels.apply(frame, work, gone, jumped);
        for (Work w : work) {
            if (gone.contains(w)) {
                continue;
            }
            boolean good = w.scoresGood(settings) && !jumped.contains(w);
            w.good = good;
            w.jumped = jumped.contains(w);
            if (seeded.contains(w)) {
                if (good) {
                    w.track.remember(w.look, w.read.summary().area(), true);
                } else {
                    w.track.bad();
                }
            } else if (good) {
                boolean clear = !Occlusion.inFront(w.read.box(), w, work, jumped);
                w.track.measured(w.chosen, w.read.box(), PartialBox.full(w.predicted, w.read.box(),
                        w.track.clearSize(), strip -> Occlusion.inFront(strip, w, work, jumped)), clear);
                w.track.remember(w.look, w.read.summary().area(), clear);
            } else {
                boolean hidden = !strange.contains(w) && Occlusion.hidden(w, work, jumped);
                w.track.bad(hidden, hidden && covers.covered(w, work, jumped, geometry.width(), geometry.height()));
            }
        }
        List<Work> kept = new ArrayList<>(work.size());
        for (Work w : work) {
            if (gone.contains(w)) {
                continue;
            }
            if (w.track.unexplainedBadFrames() >= settings.lostAfter()
                    || w.track.badFrames() >= settings.hiddenLostAfter() || covers.lost(w.track)) {
                end(w.track);
                reid.lost(w.track, frame);
                lost.add(w.id);
                meters.lost().increment();
                log.info("stream {}: object {} lost at frame {} ({} bad frames in a row, {} of them not behind another "
                        + "object, {} wholly covered; last predicted IoU {} / stability {}, minimum {} / {})", stream,
                        w.id, frame, w.track.badFrames(), w.track.unexplainedBadFrames(), w.track.coveredBadFrames(),
                        w.read.score(), w.read.stability(), settings.minPredictedIou(), settings.minStability());
                continue;
            }
            kept.add(w);
        }
        for (Reidentification.Found f : reid.reidentify(probes, kept, imageMean)) {
            Work p = f.probe();
            tracks.put(p.id, p.track);
            ended.remove(p.id);
            meters.reidentified().increment();
            log.info("stream {}: object {} found again at frame {}, {} frame(s) after it was lost (appearance {}{}): "
                    + "re-identified under its id", stream, p.id, frame, frame - f.ghost().lostFrame(),
                    String.format(Locale.ROOT, "%.2f", f.look()), p.search ? ", where the search led" : "");
        }
        return kept;
    }

    /**
     * A scene cut ({@link SceneCuts}): every followed track ends there, reported lost, and no lost one is probed any
     * more; objects seeded on this frame are kept.
     *
     * @return the followed jobs it ended (none without a cut)
     */
    private Set<Work> sceneCut(long frame, List<Work> work, float[] layout, List<Integer> lost) {
        Set<Work> gone = new HashSet<>();
        OptionalDouble cut = sceneCuts.cut(layout);
        if (cut.isEmpty()) {
            return gone;
        }
        double similarity = cut.getAsDouble();
        for (Work w : work) {
            if (w.previous != null) {
                gone.add(w);
                end(w.track);
                lost.add(w.id);
                meters.lost().increment();
            }
        }
        reid.clear(); // the objects of the scene before are not coming back
        meters.sceneCuts().increment();
        log.info("stream {}: scene cut at frame {} (image similarity {} < {}): {} followed object(s) lost {}", stream,
                frame, String.format(Locale.ROOT, "%.3f", similarity), settings.sceneCutSimilarity(),
                gone.size(), gone.stream().map(w -> w.id).toList());
        return gone;
    }

    private void end(Track t) {
        tracks.remove(t.id());
        if (t.origin() == Track.Origin.PROMPTED) {
            ended.put(t.id(), t.revision());
        }
    }

    private static double[] extent(ObjectPrompt o) {
        if (o.box() != null) {
            return o.box().clone();
        }
        double x0 = Double.MAX_VALUE;
        double y0 = Double.MAX_VALUE;
        double x1 = -Double.MAX_VALUE;
        double y1 = -Double.MAX_VALUE;
        for (double[] p : o.points()) {
            x0 = Math.min(x0, p[0]);
            y0 = Math.min(y0, p[1]);
            x1 = Math.max(x1, p[0]);
            y1 = Math.max(y1, p[1]);
        }
        return new double[] {x0, y0, x1 + 1, y1 + 1};
    }

    /** New objects ({@link NewObjects}) become discovered tracks, their masks the frame's objects. */
    private void discover(long frame, ImageEmbedding embedding, List<Work> kept, List<MaskReadout.Readout> objects) {
        int room = discoveryLimit - tracks.size();
        if (room <= 0) {
            if (!full) {
                log.warn("stream {}: {} objects, samstream.limits.max-objects-per-stream: discovery adds no more"
                        + " until some end", stream, tracks.size());
                full = true;
            }
            return;
        }
        full = false;
        List<NewObjects.Found> found = newObjects.find(embedding, geometry, kept,
                PromptSpec.DISCOVERED_ID_BASE + discovered);
        if (found.size() > room) {
            found = found.subList(0, room);
        }
        for (NewObjects.Found f : found) {
            int id = f.read().id();
            tracks.put(id, new Track(id, Track.Origin.DISCOVERED, -1, frame, f.lowResLogits(), f.read().box()));
            objects.add(f.read());
            meters.discovered().increment();
        }
        discovered += found.size();
        if (!found.isEmpty()) {
            log.info("stream {}: discovery found {} new object(s) at frame {}", stream, found.size(), frame);
        }
    }
}
