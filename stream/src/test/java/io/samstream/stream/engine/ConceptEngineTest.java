package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ModelPrecision;
import io.samstream.config.Device;
import io.samstream.config.EngineSettings;
import io.samstream.config.Limits;
import io.samstream.config.PromptSpec;
import io.samstream.config.TrackingMode;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.sam3.video.Sam3VideoModel;
import io.samstream.gpu.sam3.video.Sam3VideoSettings;
import io.samstream.stream.track.concept.ConceptStreamTracker;
import io.samstream.testkit.CocoMasks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine tracking SAM 3 concepts on the CPU with a tiny random-weight checkpoint file ({@link
 * TinySam3Checkpoint}) on a near-still generated clip: what the mechanics must do whatever the weights. The
 * detector's thresholds are lowered (random weights score low) and it runs on a concept's first frame only
 * ({@code concepts.every-frames} past the clip), so between detections the tracker alone follows the objects.
 */
@Timeout(240)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConceptEngineTest {
    static final int W = 96;
    static final int H = 64;
    static final int FRAMES = 10;
    static final Set<String> CONCEPTS = Set.of("red circle", "square", "blue");

    private Sam3VideoModel model;

    @BeforeAll
    void load(@TempDir Path dir) throws Exception {
        Path checkpoint = TinySam3Checkpoint.write(dir);
        // The engine's own opener: the file's family, configuration and tokenizer, as `samstream run` opens sam3.pt.
        assertEquals(ModelCheckpoints.Family.SAM3, ModelCheckpoints.family(ModelCheckpoints.load(checkpoint)));
        model = ModelCheckpoints.openSam3Video(ModelCheckpoints.load(checkpoint), checkpoint, 2, Device.CPU, 0,
                ModelPrecision.BF16);
        assertTrue(Files.size(checkpoint) < 6_000_000, "tiny: " + Files.size(checkpoint) + " bytes");
    }

    @AfterAll
    void close() {
        model.close();
    }

    static Engine.Settings settings(Limits limits) {
        return new Engine.Settings(new EngineSettings.Batching(2, Duration.ofMillis(10)),
                new EngineSettings.Pipeline(2, 16),
                new EngineSettings.Reconnect(Duration.ofMillis(50), Duration.ofMillis(200), 0),
                new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 3).withMode(TrackingMode.CONCEPT)
                        .withConceptsEveryFrames(1000),
                Optional.empty(), limits);
    }

    private Engine engine(CollectingSink sink, Limits limits) {
        return new Engine(settings(limits), Segmenter.concepts(model, Sam3VideoSettings.defaults()
                .withThresholds(0.01f, 0.01f), "sam3-tiny"),
                spec -> new TestPatternSource(spec.id(), W, H, 10, FRAMES, 3, false, 0.01), sink,
                EngineMetrics.inMemory());
    }

    private static StreamHandle addDock(Engine engine) {
        return engine.add(TestSources.spec("dock", "testpattern:96x64@10?frames=10", false,
                PromptSpec.ofConcepts(List.of("red circle", "square"))));
    }

    @Test
    void objectsNameTheirConceptKeepTheirIdsAndFollowTheConceptOps() throws Exception {
        CollectingSink sink = new CollectingSink();
        try (Engine engine = engine(sink, Limits.DEFAULTS)) {
            StreamHandle h = addDock(engine);
            assertTrue(h.tracker().findsConcepts());
            engine.applyPrompt(PromptMessage.parse("dock",
                    "{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"blue\",\"frame\":4}"));
            engine.applyPrompt(PromptMessage.parse("dock",
                    "{\"stream\":\"dock\",\"op\":\"remove-concept\",\"text\":\"square\",\"frame\":7}"));
            assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(200, TimeUnit.SECONDS).state());

            List<MaskRecord> records = sink.of("dock");
            assertEquals(FRAMES, records.size(), "one record per frame");
            Map<Integer, String> conceptOf = new HashMap<>();
            Map<Integer, Integer> shownOn = new HashMap<>();
            Set<Integer> lostOnce = new HashSet<>();
            Set<Integer> firstFrameIds = new TreeSet<>();
            for (int i = 0; i < FRAMES; i++) {
                MaskRecord r = records.get(i);
                assertEquals(i, r.frame(), "frames in order");
                assertEquals("sam3-tiny", r.model());
                Set<Integer> all = new TreeSet<>(r.hidden());
                all.addAll(r.lost());
                for (MaskRecord.ObjectMask o : r.objects()) {
                    assertTrue(all.add(o.id()), "frame " + i + ": object " + o.id() + " once");
                    assertTrue(o.id() >= PromptSpec.DISCOVERED_ID_BASE, "found, not prompted: " + o.id());
                    assertTrue(CONCEPTS.contains(o.concept()), "frame " + i + ": concept " + o.concept());
                    assertEquals(o.concept(), conceptOf.merge(o.id(), o.concept(), (a, b) -> a),
                            "object " + o.id() + " keeps the concept that found it");
                    boolean[] mask = CocoMasks.decode(o.mask().counts(), H, W);
                    long area = 0;
                    for (boolean b : mask) {
                        area += b ? 1 : 0;
                    }
                    assertEquals(area, o.area(), "frame " + i + " object " + o.id());
                    assertTrue(area > 0, "never an empty mask");
                    shownOn.merge(o.id(), 1, Integer::sum);
                    if (i >= 7) {
                        assertFalse(o.concept().equals("square"), "frame " + i + ": no square once it is removed");
                    }
                    if (i < 4) {
                        assertFalse(o.concept().equals("blue"), "frame " + i + ": blue is asked for from frame 4");
                    }
                }
                for (int id : r.lost()) {
                    assertTrue(lostOnce.add(id), "object " + id + " is lost once");
                }
                if (i == 0) {
                    firstFrameIds.addAll(all);
                } else if (i < 4) {
                    // No detection between a concept's first frame and the next cadence: no new object.
                    assertTrue(firstFrameIds.containsAll(all), "frame " + i + ": " + all + " beyond " + firstFrameIds);
                }
            }
            assertTrue(shownOn.values().stream().anyMatch(n -> n >= 5), "an object is followed under one id for"
                    + " several frames: " + shownOn);
            assertTrue(conceptOf.containsValue("red circle") && conceptOf.containsValue("square"), conceptOf.toString());
            assertTrue(records.get(4).objects().stream().anyMatch(o -> o.concept().equals("blue")),
                    "the concept added for frame 4 finds objects there: " + records.get(4).objects());
            // Removing "square" ends its objects: each one still followed is reported lost on frame 7.
            Set<Integer> squares = new TreeSet<>();
            conceptOf.forEach((id, c) -> {
                if (c.equals("square")) {
                    squares.add(id);
                }
            });
            assertTrue(records.get(7).lost().containsAll(records.get(6).objects().stream()
                    .filter(o -> o.concept().equals("square")).map(MaskRecord.ObjectMask::id).toList()),
                    "frame 7 lost " + records.get(7).lost() + ", squares " + squares);
            for (int i = 7; i < FRAMES; i++) {
                Set<Integer> still = new TreeSet<>(records.get(i).hidden());
                still.retainAll(squares);
                assertEquals(Set.of(), still, "frame " + i + ": no square hidden either");
            }
            // The engine closes an ended stream's tracker in a callback of its result, which may run just after get().
            ConceptStreamTracker tracker = h.tracker(ConceptStreamTracker.class);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (tracker.objectCount() != 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(0, tracker.objectCount(), "the ended stream's objects are let go");
        }
    }

    /**
     * prompts.concepts-every-frames: each stream's detector runs on its own cadence (frames 0, n, 2n, ...); a stream
     * without one keeps the engine's (1000 here: its first frame only). Counted by the trackers' detection frames.
     */
    @Test
    void eachStreamDetectsOnItsOwnCadence() throws Exception {
        CollectingSink sink = new CollectingSink();
        try (Engine engine = engine(sink, Limits.DEFAULTS)) {
            PromptSpec concepts = PromptSpec.ofConcepts(List.of("square"));
            StreamHandle every = engine.add(TestSources.spec("every", "testpattern:96x64@10?frames=10", false,
                    concepts.withConceptsEveryFrames(1)));
            StreamHandle fifth = engine.add(TestSources.spec("fifth", "testpattern:96x64@10?frames=10", false,
                    concepts.withConceptsEveryFrames(5)));
            StreamHandle global = engine.add(TestSources.spec("global", "testpattern:96x64@10?frames=10", false,
                    concepts));
            for (StreamHandle h : List.of(every, fifth, global)) {
                assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(200, TimeUnit.SECONDS)
                        .state(), h.id());
                assertEquals(FRAMES, sink.of(h.id()).size(), h.id() + ": one record per frame");
            }
            assertEquals(10, every.tracker(ConceptStreamTracker.class).detectionFrames(), "every frame");
            assertEquals(2, fifth.tracker(ConceptStreamTracker.class).detectionFrames(), "frames 0 and 5");
            assertEquals(1, global.tracker(ConceptStreamTracker.class).detectionFrames(), "the engine's 1000: frame 0");
        }
    }

    /** A reset ends every object (reported lost on its frame) and the configured concepts are detected afresh. */
    @Test
    void aResetEndsTheObjectsAndFindsTheConceptsAfresh() throws Exception {
        CollectingSink sink = new CollectingSink();
        try (Engine engine = engine(sink, Limits.DEFAULTS)) {
            StreamHandle h = addDock(engine);
            engine.applyPrompt(PromptMessage.parse("dock", "{\"stream\":\"dock\",\"op\":\"reset\",\"frame\":3}"));
            assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(200, TimeUnit.SECONDS).state());
            List<MaskRecord> records = sink.of("dock");
            Set<Integer> before = new TreeSet<>();
            for (int i = 0; i < 3; i++) {
                records.get(i).objects().forEach(o -> before.add(o.id()));
                before.addAll(records.get(i).hidden());
                before.removeAll(records.get(i).lost());
            }
            assertFalse(before.isEmpty(), "objects before the reset");
            assertTrue(records.get(3).lost().containsAll(before), "frame 3 lost " + records.get(3).lost()
                    + ", followed before " + before);
            int last = before.stream().mapToInt(Integer::intValue).max().orElseThrow();
            List<Integer> after = records.get(3).objects().stream().map(MaskRecord.ObjectMask::id).toList();
            assertFalse(after.isEmpty(), "the concepts are found again on frame 3");
            assertTrue(after.stream().allMatch(id -> id > last), "new ids after the reset: " + after + " > " + last);
        }
    }

    @Test
    void badOpsAndDefinitionsAreRefusedWithReasonsAndTheStreamGoesOn() throws Exception {
        CollectingSink sink = new CollectingSink();
        Limits threeConcepts = new Limits(256, 1000, 100_000, 900 * 1024, 64 * 1024, 256 * 1024, 1_000_000_000_000L, 3,
                20);
        try (Engine engine = engine(sink, threeConcepts)) {
            StreamHandle h = addDock(engine);
            assertEquals(PromptRejected.WRONG_MODEL, reason(engine,
                    "{\"stream\":\"dock\",\"op\":\"add\",\"object\":1,\"box\":[1,1,20,20]}"));
            assertEquals(PromptRejected.CONCEPT_EXISTS, reason(engine,
                    "{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"square\"}"));
            assertEquals(PromptRejected.UNKNOWN_CONCEPT, reason(engine,
                    "{\"stream\":\"dock\",\"op\":\"remove-concept\",\"text\":\"forklift\"}"));
            assertEquals(PromptRejected.BAD_CONCEPT, reason(engine,
                    "{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"a very long noun phrase indeed\"}"));
            assertEquals(PromptRejected.UNKNOWN_STREAM, reason(engine,
                    "{\"stream\":\"yard\",\"op\":\"concept\",\"text\":\"cup\"}"));
            // A concept with exemplar boxes (an example and a counter-example) on the frame it first applies to.
            engine.applyPrompt(PromptMessage.parse("dock", "{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"cup\","
                    + "\"boxes\":[[10,10,40,30],[50,20,90,60,0]],\"frame\":2}"));
            assertEquals(PromptRejected.CONCEPT_LIMIT, reason(engine,
                    "{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"pallet\"}"));
            // A redefinition the model cannot run is refused before the running stream is replaced.
            IllegalArgumentException grid = assertThrows(IllegalArgumentException.class, () -> engine.add(
                    TestSources.spec("dock", "testpattern:96x64@10?frames=10", false, new PromptSpec(List.of(), 2))));
            assertTrue(grid.getMessage().contains("stream dock: prompts.grid"), grid.getMessage());
            IllegalArgumentException many = assertThrows(IllegalArgumentException.class, () -> engine.add(
                    TestSources.spec("yard", "testpattern:96x64@10?frames=10", false,
                            PromptSpec.ofConcepts(List.of("a", "b", "c", "d")))));
            assertTrue(many.getMessage().contains("samstream.limits.max-concepts-per-stream = 3"), many.getMessage());
            assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(200, TimeUnit.SECONDS).state());
            assertEquals(FRAMES, sink.of("dock").size(), "the refused changes did not stop or restart the stream");
            assertTrue(sink.of("dock").stream().flatMap(r -> r.objects().stream()).anyMatch(o -> o.concept().equals("cup")),
                    "the concept with exemplar boxes finds objects");
        }
    }

    private static String reason(Engine engine, String json) {
        return assertThrows(PromptRejected.class, () -> engine.applyPrompt(PromptMessage.parse(null, json)))
                .reason();
    }
}
