package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.config.TrackingMode;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.sam2.Sam2Model;
import io.samstream.testkit.CocoMasks;
import io.samstream.testkit.TestModels;
import io.samstream.stream.track.kalman.ObjectTracker;
import io.samstream.stream.track.memory.MemoryTracker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The engine in memory mode with the tiny random-weight SAM 2 of the gpu fixtures, on a generated 128x96 clip:
 * one record per frame, in order, with the prompted ids; objects added and removed through the prompts topic's
 * mechanism appear and disappear from the frame they name on.
 */
@Timeout(240)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MemoryModeEngineTest {
    static final Path SAM2_TINY = TestModels.tinySam2();
    static final int W = 128;
    static final int H = 96;
    static final int FRAMES = 12;

    private Sam2Model model;

    @BeforeAll
    void load() {
        model = ModelCheckpoints.openSam2(SAM2_TINY, 2);
    }

    @AfterAll
    void close() {
        model.close();
    }

    static Engine.Settings settings() {
        return new Engine.Settings(new EngineSettings.Batching(2, Duration.ofMillis(10)),
                new EngineSettings.Pipeline(2, 16),
                new EngineSettings.Reconnect(Duration.ofMillis(50), Duration.ofMillis(200), 0),
                new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 1000).withMode(TrackingMode.MEMORY),
                Optional.empty());
    }

    @Test
    void recordsCarryThePromptedIdsAsObjectsAreAddedAndRemoved() throws Exception {
        CollectingSink sink = new CollectingSink();
        try (Engine engine = new Engine(settings(), Segmenter.memory(model, "sam2-tiny-fixture"),
                spec -> new TestPatternSource(spec.id(), W, H, 10, FRAMES, 3, false), sink,
                EngineMetrics.inMemory())) {
            StreamHandle h = addCam(engine);
            // From frames ahead of the pipeline: object 3 comes on frame 3, object 2 goes on frame 6.
            engine.applyPrompt(PromptMessage.parse("cam",
                    "{\"stream\":\"cam\",\"op\":\"add\",\"object\":3,\"box\":[70,10,120,40],\"frame\":3}"));
            engine.applyPrompt(PromptMessage.parse("cam", "{\"stream\":\"cam\",\"op\":\"remove\",\"object\":2,\"frame\":6}"));
            assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(200, TimeUnit.SECONDS).state());

            List<MaskRecord> records = sink.of("cam");
            assertEquals(FRAMES, records.size(), "one record per frame");
            int shownMasks = 0;
            int nonEmpty = 0;
            for (int i = 0; i < FRAMES; i++) {
                MaskRecord r = records.get(i);
                assertEquals(i, r.frame(), "frames in order");
                assertEquals("sam2-tiny-fixture", r.model());
                assertEquals(W, r.width());
                assertEquals(H, r.height());
                assertEquals(List.of(), r.lost(), "frame " + i + ": nothing hidden for 1000 frames");
                List<Integer> shown = new ArrayList<>(r.objects().stream().map(MaskRecord.ObjectMask::id).toList());
                TreeSet<Integer> all = new TreeSet<>(shown);
                all.addAll(r.hidden());
                assertEquals(shown.size() + r.hidden().size(), all.size(), "frame " + i + ": an id once");
                List<Integer> expected = i < 3 ? List.of(1, 2) : i < 6 ? List.of(1, 2, 3) : List.of(1, 3);
                assertEquals(new TreeSet<>(expected), all, "frame " + i + ": objects and hidden " + shown + " "
                        + r.hidden());
                for (MaskRecord.ObjectMask o : r.objects()) {
                    boolean[] mask = CocoMasks.decode(o.mask().counts(), H, W);
                    int area = 0;
                    for (boolean b : mask) {
                        area += b ? 1 : 0;
                    }
                    assertEquals(area, o.area(), "frame " + i + " object " + o.id() + ": area is the mask's");
                    shownMasks++;
                    nonEmpty += area > 0 ? 1 : 0;
                }
            }
            System.out.println("memory mode: " + shownMasks + " masks shown, " + nonEmpty + " not empty");
            // The fixture's object-score head is biased to +0.5 (visible): most object-frames show a mask.
            assertTrue(shownMasks >= 20, shownMasks + " masks shown of 27 object-frames");
            // Object 2 left the records with its prompt (frames 6-8 above); once the stream ended, every object's
            // memory was released (on a GPU: the device banks).
            assertEquals(List.of(), h.tracker(MemoryTracker.class).objects(), "the ended stream's memory is released");
            assertTrue(!(h.tracker() instanceof ObjectTracker), "no kalman tracker in memory mode");
        }
    }

    /**
     * Three streams of the same clip and prompts: a micro-batch's frames go to the model together (one call for the
     * whole micro-batch, each stream's frames in order), each stream gets its own records, equal to the others' (same frames, same
     * prompts); a stream whose frames the model cannot take fails alone, the others end normally.
     */
    @Test
    void aMicroBatchsStreamsGoToTheModelTogetherAndABadOneFailsAlone() throws Exception {
        CountingModel counting = new CountingModel(model);
        CollectingSink sink = new CollectingSink();
        Engine.Settings wide = new Engine.Settings(new EngineSettings.Batching(6, Duration.ofMillis(50)),
                settings().pipeline(), settings().reconnect(), settings().tracking(), Optional.empty());
        PromptSpec prompts = new PromptSpec(List.of(new ObjectPrompt(1, null, new double[] {20, 20, 60, 60})), 0);
        try (Engine engine = new Engine(wide, Segmenter.memory(counting, "sam2-tiny-fixture"),
                spec -> new TestPatternSource(spec.id(), W, H, 10, FRAMES, 3, false), sink,
                EngineMetrics.inMemory())) {
            List<StreamHandle> handles = new ArrayList<>();
            for (String id : List.of("a", "b")) {
                handles.add(engine.add(TestSources.spec(id, "testpattern:128x96@10?frames=12", false, prompts)));
            }
            handles.add(engine.add(TestSources.spec("bad", "testpattern:128x96@10?frames=12", false,
                    new PromptSpec(List.of(new ObjectPrompt(CountingModel.REFUSED, null,
                            new double[] {20, 20, 60, 60})), 0))));
            assertEquals(StreamHandle.State.ENDED, handles.get(0).result().toCompletableFuture().get(200,
                    TimeUnit.SECONDS).state());
            assertEquals(StreamHandle.State.ENDED, handles.get(1).result().toCompletableFuture().get(200,
                    TimeUnit.SECONDS).state());
            assertEquals(StreamHandle.State.FAILED, handles.get(2).result().toCompletableFuture().get(200,
                    TimeUnit.SECONDS).state(), "the stream the model refuses fails");
            List<MaskRecord> a = sink.of("a"), b = sink.of("b");
            assertEquals(FRAMES, a.size(), "one record per frame of a");
            assertEquals(FRAMES, b.size(), "one record per frame of b");
            for (int i = 0; i < FRAMES; i++) {
                assertEquals(a.get(i).objects().stream().map(o -> o.mask().counts()).toList(),
                        b.get(i).objects().stream().map(o -> o.mask().counts()).toList(), "frame " + i);
            }
            assertTrue(counting.largestBatch() >= 2, "frames of several streams went to the model together: batches "
                    + counting.batches);
        }
    }

    /**
     * A stream's consecutive frames in a micro-batch go to a batching model in one call (the stream listed several
     * times), objects added and removed by prompts between them; the records are those of the CPU model stepped frame
     * by frame.
     */
    @Test
    void aStreamsFramesGoToTheModelInOneCallAndGiveWhatFrameByFrameGives() throws Exception {
        CountingModel counting = new CountingModel(model);
        Engine.Settings wide = new Engine.Settings(new EngineSettings.Batching(6, Duration.ofMillis(200)),
                settings().pipeline(), settings().reconnect(), settings().tracking(), Optional.empty());
        List<List<String>> runs = new ArrayList<>();
        for (io.samstream.gpu.sam2.Sam2Tracking m : List.of(model, counting)) {
            CollectingSink sink = new CollectingSink();
            try (Engine engine = new Engine(wide, Segmenter.memory(m, "sam2-tiny-fixture"),
                    spec -> new TestPatternSource(spec.id(), W, H, 10, FRAMES, 3, false), sink,
                    EngineMetrics.inMemory())) {
                StreamHandle h = addCam(engine);
                engine.applyPrompt(PromptMessage.parse("cam",
                        "{\"stream\":\"cam\",\"op\":\"add\",\"object\":3,\"box\":[70,10,120,40],\"frame\":4}"));
                engine.applyPrompt(PromptMessage.parse("cam",
                        "{\"stream\":\"cam\",\"op\":\"remove\",\"object\":2,\"frame\":9}"));
                assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(200, TimeUnit.SECONDS)
                        .state());
                List<String> records = new ArrayList<>();
                for (MaskRecord r : sink.of("cam")) {
                    records.add(r.frame() + " " + r.objects().stream().map(o -> o.id() + ":" + o.score() + ":"
                            + o.mask().counts()).toList() + " hidden " + r.hidden() + " lost " + r.lost());
                }
                runs.add(records);
            }
        }
        assertEquals(FRAMES, runs.get(0).size());
        assertEquals(runs.get(0), runs.get(1), "frame by frame, and a stream's frames in one call");
        assertTrue(counting.largestStreamRun() >= 2, "a stream's consecutive frames went to the model in one call: "
                + counting.streamRuns);
    }

    /**
     * A frame whose stream follows objects is resized to the model's input ahead of the model's stage (stage
     * {@code model-input}, once per frame), and the model gets, in frame order, the bytes Pillow's resize of that
     * very frame gives.
     */
    @Test
    void framesReachTheModelResizedAheadOfItsStage() throws Exception {
        CountingModel counting = new CountingModel(model);
        EngineMetrics metrics = EngineMetrics.inMemory();
        try (Engine engine = new Engine(settings(), Segmenter.memory(counting, "sam2-tiny-fixture"),
                spec -> new TestPatternSource(spec.id(), W, H, 10, FRAMES, 3, false), new CollectingSink(), metrics)) {
            StreamHandle h = addCam(engine);
            assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(200, TimeUnit.SECONDS).state());
        }
        TestPatternSource source = new TestPatternSource("cam", W, H, 10, FRAMES, 3, false);
        int side = model.config().imageSize();
        assertEquals(FRAMES, counting.frames.size(), "one model input per frame");
        for (int i = 0; i < FRAMES; i++) {
            assertArrayEquals(MemoryTracker.modelInput(side, W, H, source.render(i)),
                    counting.frames.get(i), "frame " + i);
        }
        assertEquals(FRAMES, metrics.registry().get("samstream.stage.time").tags("stage", "model-input").timer()
                .count(), "every frame resized ahead of the model's stage");
    }

    /**
     * The model's stage is pipelined: a frame's call may start before the frame before it of its stream is finished,
     * that frame is finished while the call runs (on the host pool, not after the call), and yet each frame's record
     * is what stepping the stream's tracker frame by frame gives, with every event a step can have: an object hidden
     * and back, one lost, then found again from its memory, one lost and its memory dropped, one added and one removed
     * by prompts. The model is {@link io.samstream.stream.track.memory.ScriptedSam2}, one frame a call (each call
     * waits until the frame before it is finished: it would wait for ever were the finish behind the call) and
     * batching. 1280x720 frames, so that a frame's masks take a while to make.
     */
    @Test
    void aFrameIsFinishedWhileTheNextOneIsWithTheModelAndTheRecordsAreFrameByFrames() throws Exception {
        int frames = 20;
        int w = 1280;
        int h = 720;
        String[] changes = {"{\"stream\":\"cam\",\"op\":\"add\",\"object\":3,\"box\":[5,50,40,90],\"frame\":13}",
            "{\"stream\":\"cam\",\"op\":\"remove\",\"object\":2,\"frame\":16}"};
        PromptSpec spec = new PromptSpec(List.of(new ObjectPrompt(1, null, new double[] {5, 5, 40, 30}),
                new ObjectPrompt(2, null, new double[] {70, 50, 120, 90}),
                new ObjectPrompt(4, null, new double[] {70, 5, 120, 30})), 0);
        // Object 1: seen on steps 0-1, lost on 4 (three hidden frames), seen again from 9: found again on 10.
        // Object 2: hidden on steps 6-7, back on 8. Object 3: from its prompt on. Object 4: seen on step 0 only, lost
        // on 3, its memory dropped on 11 (8 frames later).
        io.samstream.stream.track.memory.ScriptedSam2.Script script = (id, step) -> switch (id) {
            case 1 -> step < 2 || step >= 9 ? new int[] {1, 1, 5, 5} : null;
            case 2 -> step == 6 || step == 7 ? null : new int[] {8, 8, 14, 14};
            case 4 -> step == 0 ? new int[] {9, 1, 14, 4} : null;
            default -> new int[] {1, 9, 5, 14};
        };
        Engine.Settings s = new Engine.Settings(new EngineSettings.Batching(4, Duration.ofMillis(50)),
                settings().pipeline(), settings().reconnect(),
                new EngineSettings.Tracking(true, 3, 0.5, 0.6, 0.85, 3).withMode(TrackingMode.MEMORY)
                        .withMemoryRefind(8, 2), Optional.empty());

        // Frame by frame: the stream's tracker stepped alone, the prompts as the engine resolves them.
        StreamPrompts prompts = new StreamPrompts("cam", spec);
        for (String c : changes) {
            prompts.apply(PromptMessage.parse("cam", c), 0, w, h);
        }
        MemoryTracker alone = new MemoryTracker("cam", new io.samstream.stream.track.memory.ScriptedSam2(
                model.config(), script, 0), 3, 8, 2, io.samstream.stream.track.TrackingMeters.none());
        TestPatternSource clip = new TestPatternSource("cam", w, h, 10, frames, 3, false);
        List<String> expected = new ArrayList<>();
        for (int f = 0; f < frames; f++) {
            io.samstream.stream.track.TrackedFrame t = alone.step(f, w, h, clip.render(f),
                    prompts.take(f).trackPrompts(w, h));
            expected.add(f + " " + t.masks().stream().map(m -> m.id() + ":" + m.summary().area()).toList()
                    + " hidden " + t.hidden() + " lost " + t.lost());
        }
        assertTrue(expected.get(4).endsWith("lost [1]") && expected.get(10).contains("1:"), "the script's events: "
                + expected);

        for (int limit : new int[] {0, 8}) {
            WatchingModel watching = new WatchingModel(new io.samstream.stream.track.memory.ScriptedSam2(
                    model.config(), script, limit), limit == 0);
            CollectingSink sink = new CollectingSink();
            try (Engine engine = new Engine(s, Segmenter.memory(watching, "scripted"),
                    spec2 -> new TestPatternSource(spec2.id(), w, h, 10, frames, 3, false), sink,
                    EngineMetrics.inMemory())) {
                StreamHandle handle = engine.add(TestSources.spec("cam", "testpattern:1280x720@10?frames=20", false,
                        spec));
                watching.handle.set(handle);
                for (String c : changes) {
                    engine.applyPrompt(PromptMessage.parse("cam", c));
                }
                assertEquals(StreamHandle.State.ENDED, handle.result().toCompletableFuture().get(200, TimeUnit.SECONDS)
                        .state());
            }
            List<String> got = new ArrayList<>();
            for (MaskRecord r : sink.of("cam")) {
                got.add(r.frame() + " " + r.objects().stream().map(o -> o.id() + ":" + o.area()).toList()
                        + " hidden " + r.hidden() + " lost " + r.lost());
            }
            assertEquals(expected, got, "batching " + (limit > 0) + ": the records are frame by frame's");
            if (limit == 0) {
                assertEquals(List.of(), watching.timedOut, "steps whose frame before was never finished during them");
                assertTrue(!watching.aheadOfFinish.isEmpty(), "some step went to the model before the frame before"
                        + " it was finished");
            }
        }
    }

    /**
     * A model that notes the steps of its (one) stream that reach it before the frame before them is finished; with
     * {@code waits}, such a step then waits until that frame is finished (10 s at most, else it is noted as timed
     * out). Only for a model that takes one frame a call: a frame's results are the call's.
     */
    static final class WatchingModel extends ForwardingModel {
        final java.util.concurrent.atomic.AtomicReference<StreamHandle> handle =
                new java.util.concurrent.atomic.AtomicReference<>();
        final List<Integer> aheadOfFinish = java.util.Collections.synchronizedList(new ArrayList<>());
        final List<Integer> timedOut = java.util.Collections.synchronizedList(new ArrayList<>());
        private final boolean waits;

        WatchingModel(io.samstream.gpu.sam2.Sam2Tracking inner, boolean waits) {
            super(inner);
            this.waits = waits;
        }

        @Override
        void beforeTrack(int step, byte[] rgb, List<io.samstream.gpu.sam2.ObjectPrompt> prompts) {
            StreamHandle h = handle.get();
            if (h == null || step == 0) {
                return;
            }
            MemoryTracker tracker = h.tracker(MemoryTracker.class);
            if (tracker.lastFinished() < step - 1) {
                aheadOfFinish.add(step);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (waits && tracker.lastFinished() < step - 1) {
                if (System.nanoTime() > deadline) {
                    timedOut.add(step);
                    return;
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /**
     * A model that forwards to {@code inner}, each of its streams' steps first shown to {@link #beforeTrack} (with the
     * stream's step count, 0 for its first).
     */
    abstract static class ForwardingModel implements io.samstream.gpu.sam2.Sam2Tracking {
        final io.samstream.gpu.sam2.Sam2Tracking inner;

        ForwardingModel(io.samstream.gpu.sam2.Sam2Tracking inner) {
            this.inner = inner;
        }

        /** Called before each step of a stream; may throw to refuse it. */
        abstract void beforeTrack(int step, byte[] rgb, List<io.samstream.gpu.sam2.ObjectPrompt> prompts);

        @Override
        public io.samstream.gpu.sam2.Sam2Config config() {
            return inner.config();
        }

        @Override
        public String describe() {
            return getClass().getSimpleName() + " of " + inner.describe();
        }

        @Override
        public boolean batches() {
            return inner.batches();
        }

        @Override
        public StreamTracker openStream() {
            StreamTracker s = inner.openStream();
            return new StreamTracker() {
                int step;

                @Override
                public List<io.samstream.gpu.sam2.ObjectResult> track(byte[] rgb,
                        List<io.samstream.gpu.sam2.ObjectPrompt> prompts) {
                    beforeTrack(step++, rgb, prompts);
                    return s.track(rgb, prompts);
                }

                @Override
                public java.util.Set<Integer> objects() {
                    return s.objects();
                }

                @Override
                public void remove(int objectId) {
                    s.remove(objectId);
                }

                @Override
                public void close() {
                    s.close();
                }
            };
        }

        /** The interface's batched call: each stream's frame in turn. */
        final List<List<io.samstream.gpu.sam2.ObjectResult>> eachStream(List<StreamTracker> streams,
                List<byte[]> frames, List<List<io.samstream.gpu.sam2.ObjectPrompt>> prompts) {
            return io.samstream.gpu.sam2.Sam2Tracking.super.track(streams, frames, prompts);
        }

        @Override
        public void close() {
        }
    }

    /** Stream "cam": 12 test-pattern frames, a box for object 1 and a point for object 2 from frame 0. */
    private static StreamHandle addCam(Engine engine) {
        return engine.add(TestSources.spec("cam", "testpattern:128x96@10?frames=12", false,
                new PromptSpec(List.of(new ObjectPrompt(1, null, new double[] {20, 20, 60, 60}),
                        new ObjectPrompt(2, new double[][] {{90, 50}}, null)), 0)));
    }

    /**
     * A stream's lost objects whose memory is kept hold the tracker's room (as memory banks on a GPU): when a new
     * object would pass the tracker's limit, they are forgotten and the frame goes through, the stream on.
     */
    @Test
    void lostObjectsMakeRoomWhenANewObjectWouldPassTheTrackersLimit() throws Exception {
        // Object 1 is seen on frames 0-1 only: lost at 4, its memory kept; object 2 stays. The tracker holds two
        // objects; object 3, added on frame 8, is a third.
        io.samstream.stream.track.memory.ScriptedSam2 scripted = new io.samstream.stream.track.memory.ScriptedSam2(model.config(),
                (id, step) -> id == 1 ? (step < 2 ? new int[] {1, 1, 5, 5} : null)
                        : id == 2 ? new int[] {8, 8, 14, 14} : new int[] {1, 9, 5, 14}, 2);
        CollectingSink sink = new CollectingSink();
        Engine.Settings s = new Engine.Settings(settings().batching(), settings().pipeline(), settings().reconnect(),
                new EngineSettings.Tracking(true, 3, 0.5, 0.6, 0.85, 3).withMode(TrackingMode.MEMORY)
                        .withMemoryRefind(50, 2), Optional.empty());
        try (Engine engine = new Engine(s, Segmenter.memory(scripted, "scripted"),
                spec -> new TestPatternSource(spec.id(), W, H, 10, FRAMES, 3, false), sink,
                EngineMetrics.inMemory())) {
            StreamHandle h = engine.add(TestSources.spec("cam", "testpattern:128x96@10?frames=12", false,
                    new PromptSpec(List.of(new ObjectPrompt(1, null, new double[] {5, 5, 40, 30}),
                            new ObjectPrompt(2, null, new double[] {70, 50, 120, 90})), 0)));
            engine.applyPrompt(PromptMessage.parse("cam",
                    "{\"stream\":\"cam\",\"op\":\"add\",\"object\":3,\"box\":[5,50,40,90],\"frame\":8}"));
            assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(200, TimeUnit.SECONDS).state());
            List<MaskRecord> records = sink.of("cam");
            assertEquals(FRAMES, records.size());
            assertEquals(List.of(1), records.get(4).lost());
            for (int i = 8; i < FRAMES; i++) {
                assertEquals(List.of(2, 3), records.get(i).objects().stream().map(MaskRecord.ObjectMask::id).toList(),
                        "frame " + i);
            }
            // The engine frees an ended stream's objects in a callback of its result, which may run just after get().
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (scripted.held() != 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(0, scripted.held(), "the ended stream holds nothing");
        }
    }

    /**
     * The model as a batching one (as the GPU tracker: a bad batch is refused before any stream moves on), its
     * several-stream calls counted; it refuses prompts for object {@link #REFUSED}.
     */
    static final class CountingModel extends ForwardingModel {
        final List<Integer> batches = java.util.Collections.synchronizedList(new ArrayList<>());
        /** Per call, the most frames of one stream in it. */
        final List<Integer> streamRuns = java.util.Collections.synchronizedList(new ArrayList<>());
        /** Every frame the model stepped, in the order it stepped them. */
        final List<byte[]> frames = java.util.Collections.synchronizedList(new ArrayList<>());
        static final int REFUSED = 99;

        CountingModel(io.samstream.gpu.sam2.Sam2Tracking inner) {
            super(inner);
        }

        int largestBatch() {
            synchronized (batches) {
                return batches.stream().mapToInt(Integer::intValue).max().orElse(0);
            }
        }

        int largestStreamRun() {
            synchronized (streamRuns) {
                return streamRuns.stream().mapToInt(Integer::intValue).max().orElse(0);
            }
        }

        @Override
        void beforeTrack(int step, byte[] rgb, List<io.samstream.gpu.sam2.ObjectPrompt> prompts) {
            refuse(prompts);
            frames.add(rgb.clone());
        }

        @Override
        public boolean batches() {
            return true;
        }

        static void refuse(List<io.samstream.gpu.sam2.ObjectPrompt> prompts) {
            if (prompts.stream().anyMatch(p -> p.objectId() == REFUSED)) {
                throw new IllegalArgumentException("this model refuses object " + REFUSED);
            }
        }

        @Override
        public List<List<io.samstream.gpu.sam2.ObjectResult>> track(List<StreamTracker> streams, List<byte[]> frames,
                List<List<io.samstream.gpu.sam2.ObjectPrompt>> prompts) {
            batches.add(streams.size());
            java.util.Map<StreamTracker, Integer> perStream = new java.util.IdentityHashMap<>();
            streams.forEach(st -> perStream.merge(st, 1, Integer::sum));
            streamRuns.add(perStream.values().stream().mapToInt(Integer::intValue).max().orElse(0));
            prompts.forEach(CountingModel::refuse);
            return eachStream(streams, frames, prompts);
        }
    }
}
