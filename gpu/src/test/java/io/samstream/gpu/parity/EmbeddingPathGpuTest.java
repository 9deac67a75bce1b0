package io.samstream.gpu.parity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.GpuTests;
import io.samstream.gpu.cuda.sam.CudaSamBackend;
import io.samstream.gpu.cuda.sam.CudaSamOptions;
import io.samstream.gpu.cuda.sam.EmbeddingRing;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.ResizeLongestSide;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.EmbeddingMatcher;
import io.samstream.gpu.model.EmbeddingPool;
import io.samstream.gpu.model.HostEmbeddingMatcher;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The engine's data path on the GPU: embeddings in the device ring ({@link SamBackend#embedFrames}) hold the
 * values {@link SamBackend#encodeFrames} downloads; a wave of several images' prompt sets decoded in one
 * {@link SamBackend#decodeWave} gives what each image's own {@code decodeBatch} of the host tensor gives; one
 * {@link SamBackend#postprocessWave} over frames of different sizes gives what each frame's own call gives;
 * the ring bounds what is in flight and recycles what is closed; the tracker's appearance means pooled in the ring
 * equal the host's, and so do the camera-motion scores matched in the ring. Skips where no GPU is usable.
 */
@Tag("gpu")
class EmbeddingPathGpuTest {
    static final Path MODEL = CudaParityGpuTest.FIXTURES.resolve("small1024").resolve("model.pth");

    @BeforeEach
    void requireGpu() {
        GpuTests.assumeGpu();
    }

    static List<RgbImage> frames(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int[][] sizes = {{320, 240}, {1280, 720}, {200, 300}, {640, 480}};
        List<RgbImage> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int w = sizes[i % sizes.length][0], h = sizes[i % sizes.length][1];
            byte[] rgb = new byte[w * h * 3];
            for (int p = 0; p < rgb.length; p++) {
                rgb[p] = (byte) ((p / 3 % w * 255 / w + r.nextInt(40)) & 0xFF);
            }
            out.add(new RgbImage(w, h, rgb));
        }
        return out;
    }

    @Test
    void ringEmbeddingsDecodeInOneWaveAsEachImageAlone() throws IOException {
        StateDict weights = CheckpointLoader.load(MODEL);
        SamConfig config = SamConfigInference.infer(weights);
        int s = config.imageSize();
        try (CudaSamBackend cuda = new CudaSamBackend(weights, config,
                CudaSamOptions.builder(4).maxPromptSets(16).embeddingSlots(8).build())) {
            List<RgbImage> frames = frames(3, 5);
            Tensor host = cuda.encodeFrames(frames);
            List<ImageEmbedding> ring = cuda.embedFrames(frames);
            int per = host.size() / frames.size();
            List<Tensor> hostEach = new ArrayList<>();
            for (int i = 0; i < frames.size(); i++) {
                Tensor h = new Tensor(Arrays.copyOfRange(host.data(), i * per, (i + 1) * per), 1, host.dim(1),
                        host.dim(2), host.dim(3));
                hostEach.add(h);
                assertArrayEquals(h.data(), ring.get(i).toTensor().data(), "frame " + i + ": the ring slot holds the"
                        + " embedding encodeFrames downloads");
            }
            Tensor mask = cuda.decode(hostEach.get(0), CudaDecoderParityGpuTest.prompts(s, null).get("one point"), false)
                    .lowResLogits();
            List<Prompt> kinds = new ArrayList<>(CudaDecoderParityGpuTest.prompts(s, mask).values());
            List<SamBackend.DecodeRequest> wave = new ArrayList<>();
            for (int i = 0; i < frames.size(); i++) {
                // Different sets per image (rotated kinds), both output modes.
                List<Prompt> mine = new ArrayList<>(kinds.subList(i, kinds.size()));
                mine.addAll(kinds.subList(0, i));
                wave.add(new SamBackend.DecodeRequest(ring.get(i), mine, i % 2 == 0));
                wave.add(new SamBackend.DecodeRequest(ring.get(i), mine.subList(0, 2), i % 2 != 0));
            }
            List<List<DecoderOutput>> got = cuda.decodeWave(wave);
            assertEquals(wave.size(), got.size());
            DecoderOutput untouched = got.get(1).get(0);
            // Post-processing of several frames of different sizes in one call, from the device logits = one call
            // each from host logits.
            List<SamBackend.MaskRequest> masks = new ArrayList<>();
            for (int i = 0; i < frames.size(); i++) {
                ImageSize original = new ImageSize(frames.get(i).height(), frames.get(i).width());
                // The decoder's logits read in place on the device (kept until its next call).
                masks.add(new SamBackend.MaskRequest(got.get(2 * i).get(0).planes(),
                        ResizeLongestSide.preprocessShape(original.height(), original.width(), s), original));
            }
            List<List<MaskSummary>> all = cuda.postprocessWave(masks);
            for (int i = 0; i < masks.size(); i++) {
                SamBackend.MaskRequest m = masks.get(i);
                List<MaskSummary> alone = cuda.postprocessMasks(m.lowResLogits(), m.resized(), m.original());
                assertEquals(alone.size(), all.get(i).size());
                for (int k = 0; k < alone.size(); k++) {
                    assertArrayEquals(alone.get(k).columnMajorBits(), all.get(i).get(k).columnMajorBits(),
                            "frame " + i + " mask " + k);
                    assertEquals(alone.get(k).stability(), all.get(i).get(k).stability());
                    assertArrayEquals(alone.get(k).box(), all.get(i).get(k).box());
                }
            }
            for (List<DecoderOutput> request : got) {
                for (DecoderOutput o : request) {
                    if (o != untouched) {
                        o.lowResLogits(); // to the host before the decoder runs again
                    }
                }
            }
            for (int q = 0; q < wave.size(); q++) {
                SamBackend.DecodeRequest r = wave.get(q);
                List<DecoderOutput> want = cuda.decodeBatch(hostEach.get(q / 2), r.prompts(), r.multimask());
                for (int j = 0; j < want.size(); j++) {
                    String what = "request " + q + " set " + j;
                    if (got.get(q).get(j) == untouched) {
                        continue;
                    }
                    assertArrayEquals(want.get(j).lowResLogits().shape(), got.get(q).get(j).lowResLogits().shape(), what);
                    assertArrayEquals(want.get(j).lowResLogits().data(), got.get(q).get(j).lowResLogits().data(), 1e-4f,
                            what + ": logits");
                    assertArrayEquals(want.get(j).iouPredictions(), got.get(q).get(j).iouPredictions(), 1e-5f,
                            what + ": predicted IoU");
                }
            }

            // Logits never brought over are gone after the decoder's next call: a clear error, not stale masks.
            IllegalStateException stale = assertThrows(IllegalStateException.class, untouched::lowResLogits);
            assertTrue(stale.getMessage().contains("overwritten"), stale.getMessage());
            ring.forEach(ImageEmbedding::close);
            assertEquals(8, cuda.embeddingRing().available(), "every slot back in the ring");
        }
    }

    @Test
    void theRingBoundsFramesInFlightAndRecyclesClosedSlots() throws Exception {
        StateDict weights = CheckpointLoader.load(CudaParityGpuTest.FIXTURES.resolve("tiny256").resolve("model.pth"));
        SamConfig config = SamConfigInference.infer(weights);
        try (CudaSamBackend cuda = new CudaSamBackend(weights, config,
                CudaSamOptions.builder(2).maxPromptSets(8).embeddingSlots(3).build())) {
            EmbeddingRing ring = cuda.embeddingRing();
            List<ImageEmbedding> first = cuda.embedFrames(frames(2, 1));
            assertEquals(1, ring.available());
            // Two more need two free slots: the encoder waits until a reader closes one.
            CompletableFuture<List<ImageEmbedding>> waiting = CompletableFuture.supplyAsync(
                    () -> cuda.embedFrames(frames(2, 2)));
            Thread.sleep(300);
            assertTrue(!waiting.isDone(), "the encoder waits for free slots");
            ImageEmbedding kept = first.get(0).retain();
            first.get(0).close();
            Thread.sleep(200);
            assertTrue(!waiting.isDone(), "a retained embedding keeps its slot");
            kept.close();
            List<ImageEmbedding> second = waiting.get(30, TimeUnit.SECONDS);
            assertEquals(2, second.size());
            assertThrows(IllegalStateException.class, kept::close, "closed more often than retained");
            assertThrows(IllegalArgumentException.class, () -> ring.acquire(4), "more than the ring holds");
            first.get(1).close();
            second.forEach(ImageEmbedding::close);
            assertEquals(3, ring.available());
        }
    }

    @Test
    void appearanceMeansPooledInTheRingAsOnTheHost() throws IOException {
        StateDict weights = CheckpointLoader.load(CudaParityGpuTest.FIXTURES.resolve("tiny256").resolve("model.pth"));
        SamConfig config = SamConfigInference.infer(weights);
        int side = config.embeddingSize();
        try (CudaSamBackend cuda = new CudaSamBackend(weights, config,
                CudaSamOptions.builder(2).maxPromptSets(8).embeddingSlots(4).build())) {
            List<ImageEmbedding> ring = cuda.embedFrames(frames(2, 9));
            SplittableRandom r = new SplittableRandom(3);
            List<EmbeddingPool.Request> requests = new ArrayList<>();
            for (int k = 0; k < 6; k++) {
                float[] w = new float[side * side];
                if (k == 0) {
                    Arrays.fill(w, 1f); // the whole image
                } else if (k != 3) { // k == 3: no cell at all
                    int y0 = r.nextInt(side - 2), x0 = r.nextInt(side - 2);
                    for (int y = y0; y < Math.min(side, y0 + 1 + r.nextInt(side / 2)); y++) {
                        for (int x = x0; x < Math.min(side, x0 + 1 + r.nextInt(side / 2)); x++) {
                            w[y * side + x] = (1 + r.nextInt(16)) / 16f;
                        }
                    }
                }
                requests.add(new EmbeddingPool.Request(ring.get(k % 2), w));
            }
            requests.add(new EmbeddingPool.Request(ImageEmbedding.of(ring.get(1).toTensor()), requests.get(1).weights()));
            List<float[]> got = cuda.poolEmbeddings(requests);
            assertEquals(requests.size(), got.size());
            for (int k = 0; k < requests.size(); k++) {
                float[] want = EmbeddingPool.pool(requests.get(k).embedding().toTensor(), requests.get(k).weights());
                if (want == null) {
                    assertEquals(null, got.get(k), "request " + k + ": no cell, no appearance");
                    continue;
                }
                assertEquals(config.promptDim(), got.get(k).length);
                assertArrayEquals(want, got.get(k), 1e-4f, "request " + k + ": device mean = host mean");
            }
            ring.forEach(ImageEmbedding::close);
        }
    }

    @Test
    void cameraMotionScoresMatchedInTheRingAsOnTheHost() throws IOException {
        StateDict weights = CheckpointLoader.load(CudaParityGpuTest.FIXTURES.resolve("tiny256").resolve("model.pth"));
        SamConfig config = SamConfigInference.infer(weights);
        int side = config.embeddingSize();
        try (CudaSamBackend cuda = new CudaSamBackend(weights, config,
                CudaSamOptions.builder(3).maxPromptSets(8).embeddingSlots(4).build());
                EmbeddingMatcher device = cuda.embeddingMatcher(3)) {
            HostEmbeddingMatcher host = new HostEmbeddingMatcher(3);
            List<ImageEmbedding> ring = cuda.embedFrames(frames(3, 5));
            int cols = side;
            int rows = side * 3 / 4;
            for (int i = 0; i < ring.size(); i++) {
                double[] want = host.match(ImageEmbedding.of(ring.get(i).toTensor()), cols, rows);
                double[] got = device.match(ring.get(i), cols, rows);
                if (i == 0) {
                    assertEquals(null, got, "nothing to match the first embedding against");
                    continue;
                }
                assertEquals(49, got.length);
                for (int k = 0; k < 49; k++) {
                    assertEquals(want[k], got[k], 1e-4, "frame " + i + ", shift " + (k % 7 - 3) + "," + (k / 7 - 3));
                }
            }
            assertEquals(null, device.match(ring.get(0), cols, rows - 1), "a new image size starts over");
            assertThrows(IllegalArgumentException.class, () -> device.match(ring.get(1), side + 1, rows));
            device.close();
            assertEquals(null, device.match(ring.get(1), cols, rows - 1), "a closed matcher sees no motion");
            ring.forEach(ImageEmbedding::close);
        }
    }
}
