package io.samstream.gpu.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.MaskPostprocessor;
import io.samstream.gpu.image.ResizeLongestSide;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.image.SamPreprocessor;
import io.samstream.gpu.mask.CocoRle;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The default {@link SamBackend#encodeFrames} and {@link SamBackend#postprocessMasks} give exactly what the
 * engine's Segmenter computed with the image classes before they existed (its code is repeated here
 * literally as the reference).
 */
class SamBackendDefaultsTest {
    /** A 128-pixel model input with 32 x 32 low-res masks: small, with every geometry of the real one. */
    private static final SamConfig CONFIG = new SamConfig(128, 16, 32, 2, 2, 64, 4, new int[] {1}, 32, 8, 2, 8, 64, 2,
            3, 3, 32);

    /** Remembers what reaches {@link #encode}. */
    private static final class RecordingBackend implements SamBackend {
        Tensor encoded;
        final Tensor result = Tensor.zeros(1, 1, 1, 1);

        @Override
        public SamConfig config() {
            return CONFIG;
        }

        @Override
        public String name() {
            return "recording";
        }

        @Override
        public Tensor encode(Tensor images) {
            encoded = images;
            return result;
        }

        @Override
        public DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask) {
            throw new UnsupportedOperationException();
        }
    }

    private static RgbImage noise(int w, int h, long seed) {
        Random rnd = new Random(seed);
        byte[] rgb = new byte[w * h * 3];
        for (int i = 0; i < rgb.length; i++) {
            rgb[i] = (byte) (rnd.nextInt(3) == 0 ? rnd.nextInt(256) : (i / 3 % w) * 255 / Math.max(1, w - 1));
        }
        return new RgbImage(w, h, rgb);
    }

    @Test
    void encodeFramesEncodesTheSegmentersPreprocessedBatch() {
        List<RgbImage> frames = List.of(noise(192, 108, 1), noise(64, 48, 2), noise(30, 70, 3), noise(5, 3, 4),
                noise(128, 128, 5), noise(3, 301, 6), noise(400, 20, 7));
        // Segmenter.encode before encodeFrames existed:
        int s = CONFIG.imageSize();
        ResizeLongestSide resize = new ResizeLongestSide(s);
        SamPreprocessor preprocessor = new SamPreprocessor(s);
        Tensor expected = Tensor.zeros(frames.size(), 3, s, s);
        for (int i = 0; i < frames.size(); i++) {
            preprocessor.applyInto(resize.apply(frames.get(i)), expected, i);
        }
        RecordingBackend backend = new RecordingBackend();
        assertSame(backend.result, backend.encodeFrames(frames));
        assertArrayEquals(expected.shape(), backend.encoded.shape());
        assertArrayEquals(expected.data(), backend.encoded.data());
    }

    @Test
    void encodeFramesRefusesAnEmptyBatch() {
        assertThrows(IllegalArgumentException.class, () -> new RecordingBackend().encodeFrames(List.of()));
    }

    /** Segmenter.stabilityScore before MaskSummary existed. */
    private static float stabilityScore(float[] logits) {
        long inner = 0;
        long outer = 0;
        for (float v : logits) {
            if (v > MaskPostprocessor.MASK_THRESHOLD + 1.0f) {
                inner++;
            }
            if (v > MaskPostprocessor.MASK_THRESHOLD - 1.0f) {
                outer++;
            }
        }
        return outer == 0 ? 0f : (float) ((double) inner / outer);
    }

    /** Low-res planes: smooth blobs with noise around 0, exact 0 / +-1 and a few non-finite values. */
    static Tensor logits(int n, int l, long seed) {
        Random rnd = new Random(seed);
        float[] v = new float[n * l * l];
        for (int m = 0; m < n; m++) {
            double cx = rnd.nextDouble() * l, cy = rnd.nextDouble() * l, r = 2 + rnd.nextDouble() * l / 3;
            for (int y = 0; y < l; y++) {
                for (int x = 0; x < l; x++) {
                    double d = Math.hypot(x - cx, y - cy);
                    int i = (m * l + y) * l + x;
                    v[i] = (float) ((r - d) * 0.8 + rnd.nextGaussian() * 0.3);
                    int special = rnd.nextInt(200);
                    if (special < 3) {
                        v[i] = new float[] {0f, 1f, -1f}[special];
                    } else if (special == 3 && m == 1) {
                        v[i] = new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}[rnd.nextInt(3)];
                    }
                }
            }
        }
        return new Tensor(v, n, l, l);
    }

    @ParameterizedTest(name = "original {0}x{1}")
    @CsvSource({"108, 192", "48, 64", "70, 30", "3, 5", "128, 128", "64, 128", "200, 7", "1, 1"})
    void postprocessMasksSummarizesLikeTheSegmenter(int h, int w) {
        ImageSize original = new ImageSize(h, w);
        ImageSize resized = ResizeLongestSide.preprocessShape(h, w, CONFIG.imageSize());
        int l = CONFIG.lowResSize();
        Tensor lowRes = logits(4, l, h * 31L + w);
        // plane 3: nothing above -1 (empty mask, stability 0 by the engine's rule)
        Arrays.fill(lowRes.data(), 3 * l * l, 4 * l * l, -5f);
        List<MaskSummary> got = new RecordingBackend().postprocessMasks(lowRes, resized, original);
        assertEquals(4, got.size());
        MaskPostprocessor post = new MaskPostprocessor(CONFIG.imageSize());
        for (int m = 0; m < 4; m++) {
            // Segmenter.decodeObject before postprocessMasks existed:
            Tensor plane = new Tensor(Arrays.copyOfRange(lowRes.data(), m * l * l, (m + 1) * l * l), 1, l, l);
            float[] up = post.upscaleLogits(plane, resized, original).data();
            boolean[] mask = MaskPostprocessor.threshold(up, 0, up.length);
            CocoRle rle = CocoRle.ofMask(mask, h, w);
            MaskSummary s = got.get(m);
            String what = "plane " + m;
            assertEquals(rle, s.rle(), what);
            assertEquals(rle.countsString(), s.rle().countsString(), what);
            assertArrayEquals(mask, s.toRowMajor(), what);
            assertEquals(rle.area(), s.area(), what);
            assertArrayEquals(rle.boundingBoxCorners(), s.box(), what);
            assertEquals(stabilityScore(up), s.stability(), 0f, what);
        }
        assertEquals(0f, got.get(3).stability());
        assertArrayEquals(new int[4], got.get(3).box());
    }

    @Test
    void postprocessMasksKeepsThePlaneOrderOfABatchOfBatches() {
        int l = CONFIG.lowResSize();
        Tensor lowRes = logits(6, l, 99);
        ImageSize original = new ImageSize(60, 90);
        ImageSize resized = ResizeLongestSide.preprocessShape(60, 90, CONFIG.imageSize());
        RecordingBackend backend = new RecordingBackend();
        List<MaskSummary> flat = backend.postprocessMasks(lowRes, resized, original);
        List<MaskSummary> nested = backend.postprocessMasks(lowRes.reshape(2, 3, l, l), resized, original);
        List<CocoRle> a = new ArrayList<>();
        List<CocoRle> b = new ArrayList<>();
        flat.forEach(s -> a.add(s.rle()));
        nested.forEach(s -> b.add(s.rle()));
        assertEquals(a, b);
    }

    @Test
    void postprocessMasksRefusesAResizedSizeLargerThanTheInput() {
        Tensor lowRes = logits(1, CONFIG.lowResSize(), 1);
        assertThrows(IllegalArgumentException.class, () -> new RecordingBackend().postprocessMasks(lowRes,
                new ImageSize(200, 100), new ImageSize(400, 200)));
    }
}
