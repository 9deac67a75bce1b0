package io.samstream.stream.track.kalman;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.DecodeOnlyBackend;
import io.samstream.stream.track.Discovery;
import io.samstream.stream.track.FrameGeometry;
import io.samstream.stream.track.MaskReadout;
import io.samstream.stream.track.ObjectDiscovery;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link NewObjects} on a 64 x 64 frame (a 32 x 32 low-res grid, 2 px a cell): found masks become new objects unless
 * the frame's objects (or an earlier new one) cover more than half of them.
 */
class NewObjectsTest {
    static final SamConfig TINY = new SamConfig(64, 8, 32, 4, 2, 64, 4, new int[] {1, 3}, 32, 8, 2, 8, 64, 2, 3, 3, 32);
    static final FrameGeometry FRAME = new FrameGeometry(64, 64, TINY.imageSize(), TINY.lowResSize());
    static final int L = TINY.lowResSize();
    static final DecodeOnlyBackend BACKEND = new DecodeOnlyBackend(TINY, "post-processes") {
        @Override
        public DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask) {
            throw new UnsupportedOperationException("discovery is scripted here");
        }
    };
    static final ImageEmbedding EMBEDDING = ImageEmbedding.of(new Tensor(new float[2 * 8 * 8], 1, 2, 8, 8));

    /** Low-res cells {@code [x0, x1) x [y0, y1)}. */
    static boolean[] cells(int x0, int y0, int x1, int y1) {
        boolean[] m = new boolean[L * L];
        for (int y = y0; y < y1; y++) {
            for (int x = x0; x < x1; x++) {
                m[y * L + x] = true;
            }
        }
        return m;
    }

    static Tensor logits(boolean[] m) {
        float[] v = new float[m.length];
        for (int i = 0; i < m.length; i++) {
            v[i] = m[i] ? 10 : -10;
        }
        return new Tensor(v, 1, L, L);
    }

    /** Proposes these masks, and remembers what it was told is covered. */
    static final class Scripted implements ObjectDiscovery {
        final List<boolean[]> masks;
        boolean[] covered;

        Scripted(List<boolean[]> masks) {
            this.masks = masks;
        }

        @Override
        public List<Found> discover(ImageEmbedding embedding, int width, int height, boolean[] covered) {
            this.covered = covered;
            List<Found> out = new ArrayList<>();
            for (boolean[] m : masks) {
                out.add(new Found(logits(m), 0.9f, 0.95f, new double[4], 0));
            }
            return out;
        }
    }

    /** A live object of the frame on low-res cells {@code m} (its frame mask twice their size). */
    static Work live(int id, boolean[] m) {
        Work w = new Work(id, null, true, null, null, 0, null);
        w.mask = m;
        float[] frame = new float[64 * 64];
        for (int y = 0; y < 64; y++) {
            for (int x = 0; x < 64; x++) {
                frame[y * 64 + x] = m[(y / 2) * L + x / 2] ? 10 : -10;
            }
        }
        w.read = new MaskReadout.Readout(id, 0.9f, MaskSummary.of(frame, 64, 64));
        return w;
    }

    static NewObjects rule(Scripted finder) {
        return new NewObjects(new Discovery(finder, 4, 0.5), new MaskReadout(BACKEND));
    }

    @Test
    void keyFramesComeEveryIntervalFromTheFirst() {
        NewObjects rule = rule(new Scripted(List.of()));
        assertTrue(rule.keyFrame(0));
        assertFalse(rule.keyFrame(3));
        assertTrue(rule.keyFrame(8));
    }

    @Test
    void novelMasksBecomeObjectsWithConsecutiveIds() {
        Scripted finder = new Scripted(List.of(cells(2, 2, 8, 8), cells(20, 20, 26, 26)));
        List<NewObjects.Found> found = rule(finder).find(EMBEDDING, FRAME, List.of(), 1000005);
        assertEquals(List.of(1000005, 1000006), found.stream().map(f -> f.read().id()).toList());
        assertEquals(144, found.get(0).read().summary().area(), "6 x 6 cells at 2 px a cell");
        assertEquals(0.9f, found.get(0).read().score());
    }

    @Test
    void masksTheFramesObjectsOrAnEarlierNewOneCoverAreNotNew() {
        Work known = live(1, cells(0, 0, 10, 10));
        Scripted finder = new Scripted(List.of(
                cells(4, 4, 10, 10), // wholly on object 1
                cells(6, 6, 14, 14), // 16 of 64 cells on it: new
                cells(8, 8, 14, 14), // 4 on object 1, the rest on the new one before it
                cells(30, 30, 30, 30))); // empty
        List<NewObjects.Found> found = rule(finder).find(EMBEDDING, FRAME, List.of(known), 1000000);
        assertEquals(List.of(1000000), found.stream().map(f -> f.read().id()).toList());
        assertEquals(256, found.get(0).read().summary().area());
        assertTrue(finder.covered[19 * 64 + 19] && !finder.covered[20 * 64 + 20],
                "the finder is told which pixels live objects cover");
    }
}
