package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.PromptSpec;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.gpu.model.SamBackend;
import io.samstream.testkit.CocoMasks;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The graph with synthetic sources and an in-memory sink: order, completion, failure isolation, backpressure. */
@Timeout(120)
class EngineTest {
    static SamBackend backend;
    static Segmenter segmenter;

    @BeforeAll
    static void model() {
        backend = TestSources.tinyBackend();
        segmenter = new Segmenter(backend, "tiny256");
    }

    @AfterAll
    static void close() {
        backend.close();
    }

    @Test
    void fileStreamsPublishEveryFrameInOrderAndACorruptOneFailsAlone() throws Exception {
        CollectingSink sink = new CollectingSink();
        PromptSpec prompts = new PromptSpec(List.of(new PromptSpec.ObjectPrompt(3, null, new double[] {4, 4, 40, 30})), 1);
        try (Engine engine = new Engine(TestSources.settings(4, 2, 16), segmenter, spec -> switch (spec.id()) {
                    case "bad" -> new TestSources.Synthetic("bad", 48, 32, 10, 3, 0, false, new java.util.concurrent.atomic.AtomicLong());
                    default -> TestSources.Synthetic.file(spec.id(), 48, 32, 6);
                }, sink, EngineMetrics.inMemory())) {
            StreamHandle a = engine.add(TestSources.spec("a", "a.mp4", false, prompts));
            StreamHandle bad = engine.add(TestSources.spec("bad", "bad.mp4", false, prompts));
            StreamHandle c = engine.add(TestSources.spec("c", "c.mp4", false, prompts));

            StreamHandle.Result ra = a.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            StreamHandle.Result rb = bad.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            StreamHandle.Result rc = c.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.ENDED, ra.state());
            assertEquals(StreamHandle.State.ENDED, rc.state());
            assertEquals(StreamHandle.State.FAILED, rb.state());
            assertTrue(rb.error().orElseThrow().getMessage().contains("corrupt data at frame 3"),
                    rb.error().orElseThrow().getMessage());
            assertEquals(3, rb.published(), "the frames before the corruption are published");
            for (String s : List.of("a", "c")) {
                List<MaskRecord> records = sink.of(s);
                assertEquals(6, records.size());
                for (int i = 0; i < records.size(); i++) {
                    MaskRecord r = records.get(i);
                    assertEquals(i, r.frame(), "frame order");
                    assertEquals(List.of(3, PromptSpec.GRID_ID_BASE), r.objects().stream().map(MaskRecord.ObjectMask::id).toList());
                    for (MaskRecord.ObjectMask o : r.objects()) {
                        assertEquals(o.area(), CocoMasks.area(CocoMasks.decode(o.mask().counts(), 32, 48)));
                        assertTrue(o.stability() >= 0 && o.stability() <= 1);
                    }
                }
            }
            assertTrue(sink.ended.containsAll(List.of("a", "bad", "c")));
            assertTrue(engine.streams().isEmpty());
        }
    }

    @Test
    void aPromptOutsideTheFrameFailsItsStreamWithTheObjectNamed() throws Exception {
        CollectingSink sink = new CollectingSink();
        try (Engine engine = new Engine(TestSources.settings(2, 1, 8), segmenter,
                spec -> TestSources.Synthetic.file(spec.id(), 48, 32, 4), sink, EngineMetrics.inMemory())) {
            StreamHandle bad = engine.add(TestSources.spec("bad", "x.mp4", false, TestSources.onePoint(100, 10)));
            StreamHandle good = engine.add(TestSources.spec("good", "y.mp4", false, TestSources.onePoint(10, 10)));
            StreamHandle.Result rb = bad.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.FAILED, rb.state());
            String m = rb.error().orElseThrow().getMessage();
            assertTrue(m.contains("object 7") && m.contains("outside the 48x32 frame"), m);
            assertEquals(0, rb.published());
            assertEquals(StreamHandle.State.ENDED, good.result().toCompletableFuture().get(60, TimeUnit.SECONDS).state());
            assertEquals(4, sink.of("good").size());
        }
    }

    /** A sink that acknowledges nothing: the file source is held back (bounded queues), nothing is dropped. */
    @Test
    void aSlowSinkHoldsTheSourceBackAndLosesNothing() throws Exception {
        CollectingSink sink = new CollectingSink().holding();
        TestSources.Synthetic source = TestSources.Synthetic.file("f", 32, 24, 80);
        int pendingAcks = 4;
        try (Engine engine = new Engine(TestSources.settings(2, 1, pendingAcks), segmenter, spec -> source, sink,
                EngineMetrics.inMemory())) {
            StreamHandle h = engine.add(TestSources.spec("f", "f.mp4", false, TestSources.onePoint(5, 5)));
            // Wait until the sink holds all it may, then until the source stopped advancing.
            while (sink.accepted() < pendingAcks) {
                Thread.sleep(20);
            }
            long seen;
            do {
                seen = source.produced.get();
                Thread.sleep(300);
            } while (source.produced.get() != seen);
            assertEquals(pendingAcks, sink.accepted(), "no more records out than pending-acks allows");
            assertEquals(pendingAcks, engine.metrics().pendingAcksNow());
            // pending-acks + a batch in the encoder, one in the decoder, one forming + a frame or so per
            // boundary (13 here): bounded by the stages' buffers, far below the file's 80 frames.
            assertTrue(source.produced.get() <= pendingAcks + 3 * 2 + 8,
                    "the source was held back: " + source.produced.get() + " frames decoded");
            assertEquals(0, h.published());

            sink.release();
            StreamHandle.Result r = h.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.ENDED, r.state());
            assertEquals(80, r.published());
            assertEquals(0, r.dropped());
            assertEquals(80, sink.of("f").size());
        }
    }

    /** A fast live source behind a slow encoder: old frames are dropped, the pipeline stays short. */
    @Test
    void aLiveSourceBehindASlowEncoderDropsOldFrames() throws Exception {
        CollectingSink sink = new CollectingSink();
        java.util.concurrent.atomic.AtomicLong produced = new java.util.concurrent.atomic.AtomicLong();
        SlowBackend slow = new SlowBackend(backend, 150);
        int maxBatch = 2;
        try (Engine engine = new Engine(TestSources.settings(maxBatch, 1, 8), new Segmenter(slow, "slow"),
                spec -> new TestSources.Synthetic("cam", 32, 24, -1, -1, 2, true, produced), sink,
                EngineMetrics.inMemory())) {
            StreamHandle h = engine.add(TestSources.spec("cam", "rtsp://127.0.0.1/cam", true, TestSources.onePoint(5, 5)));
            long maxInPipeline = 0;
            while (sink.of("cam").size() < 12) {
                maxInPipeline = Math.max(maxInPipeline, h.inPipeline());
                Thread.sleep(5);
            }
            engine.remove("cam");
            StreamHandle.Result r = h.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.REMOVED, r.state());
            assertTrue(r.dropped() > 0, "frames were dropped");
            assertEquals(r.decoded(), r.dropped() + r.published(), "every frame is published or counted as dropped");
            // The frames between source and sink stay bounded by the stages' buffers (a batch in the encoder,
            // one in the decoder, one forming, a frame at the hub and at the sinks: 8 here), not by how
            // long it ran (hundreds of frames were decoded meanwhile).
            assertTrue(maxInPipeline <= 3 * maxBatch + 4, "frames in the pipeline: " + maxInPipeline);
            List<MaskRecord> records = sink.of("cam");
            for (int i = 1; i < records.size(); i++) {
                assertTrue(records.get(i).frame() > records.get(i - 1).frame(), "frames in order");
            }
            assertTrue(records.get(records.size() - 1).frame() >= records.size() + r.dropped() / 2,
                    "published frames skip the dropped ones");
        }
    }

    /** A live source that drops its connection is reopened with backoff; frame numbers go on. */
    @Test
    void aLiveSourceThatDisconnectsIsReopened() throws Exception {
        CollectingSink sink = new CollectingSink();
        java.util.concurrent.atomic.AtomicInteger opens = new java.util.concurrent.atomic.AtomicInteger();
        EngineMetrics metrics = EngineMetrics.inMemory();
        try (Engine engine = new Engine(TestSources.settings(2, 1, 8), segmenter, spec -> {
                    opens.incrementAndGet();
                    // Each connection delivers 3 frames, then the peer goes away.
                    return new TestSources.Synthetic("cam", 32, 24, 10, 3, 5, true, new java.util.concurrent.atomic.AtomicLong());
                }, sink, metrics)) {
            StreamHandle h = engine.add(TestSources.spec("cam", "rtsp://127.0.0.1/cam", true, TestSources.onePoint(5, 5)));
            while (opens.get() < 3 || h.published() < 4) {
                Thread.sleep(10);
            }
            engine.remove("cam");
            StreamHandle.Result r = h.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.REMOVED, r.state(), "a live stream's disconnects are not failures");
            assertTrue(metrics.registry().get("samstream.source.restarts").tag("stream", "cam").counter().count() >= 2);
            List<MaskRecord> records = sink.of("cam");
            for (int i = 1; i < records.size(); i++) {
                assertTrue(records.get(i).frame() > records.get(i - 1).frame(), "numbering goes on across reconnects");
            }
        }
    }

    /** A redefined stream's old run ending does not end the new run at the sinks (files are keyed by id). */
    @Test
    void theOldRunOfARedefinedStreamDoesNotEndTheNewRunsSinkState() throws Exception {
        CollectingSink sink = new CollectingSink();
        try (Engine engine = new Engine(TestSources.settings(2, 1, 8), segmenter,
                spec -> new TestSources.Synthetic("cam", 32, 24, -1, -1, 10, true,
                        new java.util.concurrent.atomic.AtomicLong()), sink, EngineMetrics.inMemory())) {
            StreamHandle first = engine.add(TestSources.spec("cam", "rtsp://127.0.0.1/cam", true,
                    TestSources.onePoint(5, 5)));
            while (first.published() < 2) {
                Thread.sleep(10);
            }
            StreamHandle second = engine.add(TestSources.spec("cam", "rtsp://127.0.0.1/cam", true,
                    TestSources.onePoint(6, 6)));
            assertEquals(StreamHandle.State.REMOVED,
                    first.result().toCompletableFuture().get(60, TimeUnit.SECONDS).state());
            assertTrue(sink.ended.isEmpty(), "the new run of cam is still going: " + sink.ended);
            long before = sink.of("cam").size();
            while (sink.of("cam").size() < before + 2) {
                Thread.sleep(10);
            }
            engine.remove("cam");
            second.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(List.of("cam"), sink.ended, "ended once, by the run that is registered");
            assertEquals(1, sink.endedOn.size());
            assertTrue(sink.endedOn.get(0).startsWith("samstream-sinks-"), "on a sinks' thread: " + sink.endedOn);
            List<MaskRecord> records = sink.of("cam");
            assertEquals(records.size(), records.stream().map(MaskRecord::frame).distinct().count(),
                    "frame numbers go on across the redefinition, never twice the same");
        }
    }

    /** An Error while decoding a frame fails that stream only; the pipeline goes on and counts its batches. */
    @Test
    void anErrorInTheDecoderFailsItsStreamAlone() throws Exception {
        CollectingSink sink = new CollectingSink();
        EngineMetrics metrics = EngineMetrics.inMemory();
        java.util.concurrent.atomic.AtomicBoolean explode = new java.util.concurrent.atomic.AtomicBoolean(true);
        SamBackend exploding = new SlowBackend(backend, 0) {
            @Override
            public io.samstream.gpu.model.DecoderOutput decode(io.samstream.gpu.tensor.Tensor embedding,
                    io.samstream.gpu.model.Prompt prompt, boolean multimask) {
                if (explode.get()) {
                    throw new StackOverflowError("decoder blew up");
                }
                return super.decode(embedding, prompt, multimask);
            }
        };
        try (Engine engine = new Engine(TestSources.settings(2, 1, 8), new Segmenter(exploding, "exploding"),
                spec -> TestSources.Synthetic.file(spec.id(), 32, 24, 4), sink, metrics)) {
            StreamHandle boom = engine.add(TestSources.spec("boom", "boom.mp4", false, TestSources.onePoint(5, 5)));
            StreamHandle.Result rb = boom.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.FAILED, rb.state());
            assertTrue(rb.error().orElseThrow().getMessage().contains("decoder blew up"),
                    rb.error().orElseThrow().getMessage());
            explode.set(false);
            StreamHandle ok = engine.add(TestSources.spec("ok", "ok.mp4", false, TestSources.onePoint(5, 5)));
            StreamHandle.Result ro = ok.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.ENDED, ro.state(), "the pipeline survived the Error");
            assertEquals(4, ro.published());
            assertEquals(0, metrics.batchesInFlightNow(), "every batch left the decoder");
        }
    }

    /**
     * A frame the encoder refuses fails its own stream only, even when it shares a batch with other streams'
     * frames: the batch is encoded again frame by frame.
     */
    @Test
    void aFrameTheEncoderRefusesFailsItsStreamAloneNotItsBatch() throws Exception {
        CollectingSink sink = new CollectingSink();
        EngineMetrics metrics = EngineMetrics.inMemory();
        int s = backend.config().imageSize();
        // 40x24 frames are padded from row 154 on, 32x24 ones from row 192: this backend refuses the former.
        SamBackend picky = new SlowBackend(backend, 0) {
            @Override
            public io.samstream.gpu.tensor.Tensor encode(io.samstream.gpu.tensor.Tensor images) {
                float[] d = images.data();
                for (int i = 0; i < images.shape()[0]; i++) {
                    if (d[i * 3 * s * s + 170 * s + 10] == 0f) {
                        throw new IllegalArgumentException("image " + i + " is not what this encoder takes");
                    }
                }
                return super.encode(images);
            }
        };
        int frames = 12;
        try (Engine engine = new Engine(TestSources.settings(8, 1, 8), new Segmenter(picky, "picky"),
                spec -> spec.id().equals("wide") ? TestSources.Synthetic.file("wide", 40, 24, frames)
                        : TestSources.Synthetic.file(spec.id(), 32, 24, frames), sink, metrics)) {
            StreamHandle wide = engine.add(TestSources.spec("wide", "wide.mp4", false, TestSources.onePoint(5, 5)));
            StreamHandle ok = engine.add(TestSources.spec("ok", "ok.mp4", false, TestSources.onePoint(5, 5)));
            StreamHandle.Result rw = wide.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            StreamHandle.Result ro = ok.result().toCompletableFuture().get(60, TimeUnit.SECONDS);
            assertEquals(StreamHandle.State.FAILED, rw.state());
            String message = rw.error().orElseThrow().getMessage();
            // In a batch of its own (the batcher sends a lone frame while nothing is in flight) or picked out of a
            // shared one, the refused frame's error is its stream's.
            assertTrue((message.contains("encoding frame") || message.contains("encoding failed"))
                    && message.contains("not what this encoder takes"), message);
            assertEquals(StreamHandle.State.ENDED, ro.state(), "the other stream of the batch went on");
            assertEquals(frames, ro.published());
            assertEquals(frames, sink.records.get("ok").size());
        }
    }

    /** Once the pipeline stopped, adding a stream is refused rather than left hanging. */
    @Test
    void addingAStreamAfterThePipelineStoppedIsRefused() throws Exception {
        try (Engine engine = new Engine(TestSources.settings(2, 1, 8), segmenter,
                spec -> TestSources.Synthetic.file(spec.id(), 32, 24, 2), new CollectingSink(),
                EngineMetrics.inMemory())) {
            java.lang.reflect.Field f = Engine.class.getDeclaredField("pipelineSwitch");
            f.setAccessible(true);
            ((akka.stream.UniqueKillSwitch) f.get(engine)).abort(new IllegalStateException("simulated failure"));
            try {
                engine.pipelineDone().toCompletableFuture().get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException expected) {
                // the pipeline failed
            }
            IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    () -> engine.add(TestSources.spec("late", "late.mp4", false, TestSources.onePoint(5, 5))));
            assertTrue(e.getMessage().contains("late") && e.getMessage().contains("pipeline has stopped"),
                    e.getMessage());
        }
    }

    /** A backend whose encoder takes {@code millis} longer per batch: a slow GPU. */
    static class SlowBackend implements SamBackend {
        final SamBackend inner;
        final long millis;

        SlowBackend(SamBackend inner, long millis) {
            this.inner = inner;
            this.millis = millis;
        }

        @Override
        public io.samstream.gpu.model.SamConfig config() {
            return inner.config();
        }

        @Override
        public String name() {
            return "slow " + inner.name();
        }

        @Override
        public io.samstream.gpu.tensor.Tensor encode(io.samstream.gpu.tensor.Tensor images) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return inner.encode(images);
        }

        @Override
        public io.samstream.gpu.model.DecoderOutput decode(io.samstream.gpu.tensor.Tensor embedding,
                io.samstream.gpu.model.Prompt prompt, boolean multimask) {
            return inner.decode(embedding, prompt, multimask);
        }
    }
}
