package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.ActorSystem;
import akka.stream.Materializer;
import akka.stream.javadsl.Sink;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.mask.CocoRle;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Previews: made only for watched streams, at most preview-fps, drawn with their masks; a viewer that does not read
 * keeps only the newest frames, and nothing it does blocks the caller (the pipeline's thread).
 */
@Timeout(60)
class PreviewHubTest {
    private static ActorSystem system;
    private static Materializer materializer;
    private static final int W = 64;
    private static final int H = 48;

    @BeforeAll
    static void start() {
        system = ActorSystem.create("preview-test");
        materializer = Materializer.matFromSystem(system);
    }

    @AfterAll
    static void stop() {
        system.terminate();
    }

    @Test
    void unwatchedStreamsCostNoPreviewWatchedOnesGetTheirFrames() throws Exception {
        StreamFigures figures = new StreamFigures();
        try (PreviewHub hub = new PreviewHub(4, 1000, figures, id -> Optional.empty())) {
            CompletableFuture<Void> run = new CompletableFuture<>();
            assertFalse(hub.published("run", "cam", run, record(0), frame(0)), "nobody watches: the frame is not kept");
            assertEquals(0, hub.made());
            assertEquals(1, figures.of("cam").frames(), "its figures still count it");

            Viewer v = new Viewer("cam", 32);
            hub.open(v);
            var first = v.source().runWith(Sink.head(), materializer).toCompletableFuture();
            assertTrue(hub.published("run", "cam", run, record(1), frame(1)), "watched: kept for the preview pool");
            Preview p = first.get(20, TimeUnit.SECONDS);
            assertEquals(1, p.frame());
            assertEquals(32, p.width());
            BufferedImage img = ImageIO.read(new ByteArrayInputStream(p.jpeg()));
            assertEquals(32, img.getWidth());
            assertEquals(24, img.getHeight());
            // The object's mask covers the left half: drawn in its colour (object 3: blue, over the grey frame).
            int inside = img.getRGB(4, 12);
            int outside = img.getRGB(28, 12);
            assertTrue((inside & 0xFF) > (outside & 0xFF) + 30, Integer.toHexString(inside) + " vs "
                    + Integer.toHexString(outside));
            assertTrue(p.objects().contains("\"id\":3") && p.objects().contains("\"width\":64"), p.objects());
            hub.close(v);
            assertEquals(0, hub.viewers());
            assertFalse(hub.published("run", "cam", run, record(2), frame(2)), "closed viewer: nobody watches again");
            run.complete(null);
            assertTrue(figures.streams().isEmpty(), "an ended stream's figures go");
        }
    }

    @Test
    void previewsAreMadeAtMostPreviewFps() {
        try (PreviewHub hub = new PreviewHub(4, 1, new StreamFigures(), id -> Optional.empty())) {
            hub.open(new Viewer("cam", 32));
            int kept = 0;
            for (int i = 0; i < 50; i++) {
                kept += hub.published("run", "cam", new CompletableFuture<>(), record(i), frame(i)) ? 1 : 0;
            }
            assertEquals(1, kept, "1 a second: one of 50 frames in a burst");
        }
    }

    @Test
    void viewersPastMaxViewersAreRefused() {
        try (PreviewHub hub = new PreviewHub(2, 10, new StreamFigures(), id -> Optional.empty())) {
            Viewer a = new Viewer("a", 32);
            hub.open(a);
            hub.open(new Viewer("b", 32));
            ApiException e = assertThrows(ApiException.class, () -> hub.open(new Viewer("c", 32)));
            assertEquals(429, e.status());
            assertEquals("max-viewers", e.field());
            hub.close(a);
            hub.close(a); // once only
            hub.open(new Viewer("c", 32));
            assertEquals(2, hub.viewers());
        }
        try (PreviewHub off = new PreviewHub(0, 10, new StreamFigures(), id -> Optional.empty())) {
            assertEquals(503, assertThrows(ApiException.class, () -> off.open(new Viewer("a", 32)))
                    .status());
        }
    }

    @Test
    void aViewerThatDoesNotReadKeepsOnlyTheNewestFrames() throws Exception {
        Viewer v = new Viewer("cam", 32);
        // The connection runs the viewer's frames; it reads one (the stream is running), then none for a while.
        SlowReader reader = new SlowReader();
        v.source().runWith(Sink.fromSubscriber(reader), materializer);
        reader.subscribed.get(20, TimeUnit.SECONDS);
        reader.subscription.request(1);
        for (long deadline = System.nanoTime() + 20_000_000_000L; reader.got.isEmpty() && System.nanoTime() < deadline; ) {
            v.offer(new Preview("cam", -1, 32, new byte[1], "{}", 0));
            Thread.sleep(20);
        }
        assertEquals(List.of(-1L), reader.got, "the first frame read");
        long t0 = System.nanoTime();
        for (int i = 0; i < 200; i++) { // nothing reads now
            v.offer(new Preview("cam", i, 32, new byte[1], "{}", 0));
        }
        assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "offering never waits for the viewer");
        Thread.sleep(200); // the offers reach the queue
        v.complete();
        reader.subscription.request(1000);
        List<Long> got = reader.done.get(20, TimeUnit.SECONDS);
        List<Long> after = got.subList(1, got.size()).stream().filter(f -> f >= 0).toList();
        assertEquals(List.of(198L, 199L), after.subList(Math.max(0, after.size() - 2), after.size()), "the newest kept");
        // The queue's 2, and what the hand-over to the connection holds (Akka's input buffer, 16), not 200.
        assertTrue(after.size() <= Viewer.QUEUE + 16, "the oldest dropped: " + after);
    }

    /** Asks for nothing until told to; then collects the frames' indexes until the end. */
    private static final class SlowReader implements org.reactivestreams.Subscriber<Preview> {
        final CompletableFuture<Void> subscribed = new CompletableFuture<>();
        final CompletableFuture<List<Long>> done = new CompletableFuture<>();
        final List<Long> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        volatile org.reactivestreams.Subscription subscription;

        @Override
        public void onSubscribe(org.reactivestreams.Subscription s) {
            subscription = s;
            subscribed.complete(null);
        }

        @Override
        public void onNext(Preview p) {
            got.add(p.frame());
        }

        @Override
        public void onError(Throwable t) {
            done.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            done.complete(List.copyOf(got));
        }
    }

    /** A grey frame. */
    private static VideoFrame frame(long index) {
        byte[] rgb = new byte[3 * W * H];
        java.util.Arrays.fill(rgb, (byte) 100);
        return new VideoFrame("cam", index, index * 100, Instant.now(), W, H, rgb);
    }

    /** Object 3 (palette colour 3) covering the left half. */
    private static MaskRecord record(long index) {
        boolean[] mask = new boolean[W * H];
        for (int y = 0; y < H; y++) {
            for (int x = 0; x < W / 2; x++) {
                mask[y * W + x] = true;
            }
        }
        MaskRecord.ObjectMask o = new MaskRecord.ObjectMask(3, 0.9f, 0.9f, new MaskRecord.Box(0, 0, W / 2, H),
                W * H / 2, new MaskRecord.Rle(H, W, CocoRle.encode(mask, H, W)));
        return new MaskRecord("cam", index, index * 100, Instant.now(), W, H, "test", List.of(o));
    }
}
