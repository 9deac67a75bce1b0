package io.samstream.stream.engine;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.video.FrameSource;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.SamModels;
import io.samstream.config.Device;
import io.samstream.gpu.model.SamBackend;
import io.samstream.testkit.TestModels;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** Synthetic frame sources, the tiny test model and engine settings for tests. */
final class TestSources {
    /** The tiny SAM of the gpu module's fixtures (256 input): fast enough for tests on 2 cores. */
    static final Path TINY_MODEL = TestModels.tinySam();

    private TestSources() {}

    static SamBackend tinyBackend() {
        return SamModels.open(TINY_MODEL, Device.CPU, 2);
    }

    static Engine.Settings settings(int maxBatch, int inFlight, int pendingAcks) {
        return new Engine.Settings(new EngineSettings.Batching(maxBatch, Duration.ofMillis(10)),
                new EngineSettings.Pipeline(inFlight, pendingAcks),
                new EngineSettings.Reconnect(Duration.ofMillis(50), Duration.ofMillis(200), 0));
    }

    static StreamSpec spec(String id, String location, boolean live, PromptSpec prompts) {
        return new StreamSpec(id, location, live ? StreamSpec.Live.TRUE : StreamSpec.Live.FALSE,
                StreamSpec.Decoder.CPU, prompts);
    }

    static PromptSpec onePoint(int x, int y) {
        return new PromptSpec(List.of(new PromptSpec.ObjectPrompt(7, new double[][] {{x, y}}, null)), 0);
    }

    /** A moving square on a gradient; {@code frames} of them (-1: endless), then the end or {@code failAfter}. */
    static final class Synthetic implements FrameSource {
        final String id;
        final int width;
        final int height;
        final long frames;
        final long failAfter;
        final long delayMillis;
        final boolean live;
        final AtomicLong produced;
        long n;

        Synthetic(String id, int width, int height, long frames, long failAfter, long delayMillis, boolean live,
                AtomicLong produced) {
            this.id = id;
            this.width = width;
            this.height = height;
            this.frames = frames;
            this.failAfter = failAfter;
            this.delayMillis = delayMillis;
            this.live = live;
            this.produced = produced;
        }

        static Synthetic file(String id, int w, int h, long frames) {
            return new Synthetic(id, w, h, frames, -1, 0, false, new AtomicLong());
        }

        @Override
        public VideoFrame next() throws IOException {
            if (n == failAfter) {
                throw new IOException(id + ": corrupt data at frame " + n + " (invalid NAL unit)");
            }
            if (frames >= 0 && n >= frames) {
                return null;
            }
            if (delayMillis > 0) {
                try {
                    Thread.sleep(delayMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
            }
            byte[] rgb = new byte[width * height * 3];
            int sx = (int) (n * 2 % Math.max(1, width - 8));
            for (int y = 0; y < height; y++) {
                for (int x = 0; x < width; x++) {
                    int p = (y * width + x) * 3;
                    boolean square = x >= sx && x < sx + width / 3 && y >= height / 3 && y < 2 * height / 3;
                    rgb[p] = (byte) (square ? 250 : x * 255 / width);
                    rgb[p + 1] = (byte) (square ? 20 : y * 255 / height);
                    rgb[p + 2] = (byte) (square ? 30 : 128);
                }
            }
            produced.incrementAndGet();
            VideoFrame f = new VideoFrame(id, n, n * 40, Instant.now(), width, height, rgb);
            n++;
            return f;
        }

        @Override
        public boolean isLive() {
            return live;
        }

        @Override
        public String describe() {
            return id + " synthetic " + width + "x" + height;
        }

        @Override
        public void close() {}
    }
}
