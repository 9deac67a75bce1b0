package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;
import org.junit.jupiter.api.Test;

class PackedMaskTest {
    /** Bits and booleans agree to the bit: area, and IoU with a pixel-by-pixel count, at sizes that end mid-word. */
    @Test
    void overlapsAreTheBooleanMasksOnes() {
        Random rnd = new Random(3);
        for (int pixels : new int[] {1, 63, 64, 65, 77 * 83, 288 * 288}) {
            for (double density : new double[] {0, 0.02, 0.5, 1}) {
                float[] a = logits(rnd, pixels, density), b = logits(rnd, pixels, density / 2 + 0.1);
                boolean[] ab = MaskOverlaps.binary(a), bb = MaskOverlaps.binary(b);
                PackedMask pa = PackedMask.of(a), pb = PackedMask.of(bb);
                String at = pixels + " pixels at density " + density;
                assertEquals(MaskOverlaps.area(ab), pa.area(), at);
                assertEquals(MaskOverlaps.area(bb), pb.area(), at);
                assertEquals(iou(ab, bb), pa.iou(pb), at);
                assertEquals(iou(bb, ab), pb.iou(pa), at);
                assertEquals(iou(ab, ab), pa.iou(PackedMask.of(ab)), at);
            }
        }
        assertEquals(0f, PackedMask.of(new float[100]).iou(PackedMask.of(new boolean[100])), "both empty: 0");
    }

    /**
     * Objects, not noise: rectangles anywhere on frames whose rows end mid-word, apart, touching, nested or crossing,
     * so that the word spans the IoU compares meet in every way (and not at all). The IoU is the pixel count's, and
     * iouAbove is iou() > threshold at thresholds that the ratio of areas decides and ones it does not.
     */
    @Test
    void objectsCompareOnlyWhereTheirSpansMeet() {
        Random rnd = new Random(11);
        for (int[] size : new int[][] {{288, 288}, {77, 83}, {5, 3}}) {
            int w = size[0], h = size[1];
            for (int trial = 0; trial < 200; trial++) {
                boolean[] a = rectangle(rnd, w, h), b = rnd.nextInt(8) == 0 ? a.clone() : rectangle(rnd, w, h);
                PackedMask pa = PackedMask.of(a), pb = PackedMask.of(b);
                String at = w + "x" + h + " trial " + trial;
                assertEquals(iou(a, b), pa.iou(pb), at);
                assertEquals(iou(b, a), pb.iou(pa), at);
                for (float t : new float[] {0f, 0.1f, 0.5f, pa.iou(pb), 0.99f}) {
                    assertEquals(pa.iou(pb) > t, pa.iouAbove(pb, t), at + " threshold " + t);
                    assertEquals(pb.iou(pa) > t, pb.iouAbove(pa, t), at + " threshold " + t);
                }
            }
        }
        PackedMask empty = PackedMask.of(new boolean[64 * 5]);
        assertEquals(false, empty.iouAbove(empty, 0f), "both empty: IoU 0, not above 0");
    }

    /**
     * A detection made from a frame's array of all masks packs the same bits as one made from its own copy, and its
     * logits, copied out when first read, are its slice of that array.
     */
    @Test
    void aDetectionOnASliceIsTheSameAsOneOnACopy() {
        Random rnd = new Random(5);
        int pixels = 77 * 83, n = 3;
        float[] all = logits(rnd, n * pixels, 0.3);
        for (int i = 0; i < n; i++) {
            float[] own = java.util.Arrays.copyOfRange(all, i * pixels, (i + 1) * pixels);
            Detection view = new Detection(i, 0.5f, new float[4], all, i * pixels, pixels);
            Detection copy = new Detection(i, 0.5f, new float[4], own);
            assertEquals(copy.bits().area(), view.bits().area(), "detection " + i);
            assertEquals(1f, view.bits().iou(copy.bits()), "detection " + i);
            assertArrayEquals(own, view.maskLogits(), "detection " + i);
            assertSame(view.maskLogits(), view.maskLogits(), "copied out once");
            assertSame(own, copy.maskLogits(), "a detection on its own array keeps it");
        }
        assertThrows(IndexOutOfBoundsException.class, () -> PackedMask.of(all, 2 * pixels + 1, pixels));
    }

    @Test
    void masksOfOtherSizesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> PackedMask.of(new float[64]).iou(PackedMask.of(
                new float[65])));
    }

    /** Logits of which about {@code density} are above 0 (a few exactly 0, which is not above). */
    private static float[] logits(Random rnd, int n, double density) {
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            out[i] = rnd.nextInt(50) == 0 ? 0f : rnd.nextDouble() < density ? 1 + rnd.nextFloat() : -rnd.nextFloat();
        }
        return out;
    }

    /** A w x h frame with one filled rectangle (at times empty: a rectangle of no rows). */
    private static boolean[] rectangle(Random rnd, int w, int h) {
        boolean[] m = new boolean[w * h];
        int x0 = rnd.nextInt(w), y0 = rnd.nextInt(h);
        int x1 = x0 + rnd.nextInt(w - x0 + 1), y1 = y0 + rnd.nextInt(h - y0 + 1);
        for (int y = y0; y < y1; y++) {
            for (int x = x0; x < x1; x++) {
                m[y * w + x] = true;
            }
        }
        return m;
    }

    /** Intersection over union counted pixel by pixel (0 when both are empty). */
    private static float iou(boolean[] a, boolean[] b) {
        int inter = 0;
        int union = 0;
        for (int i = 0; i < a.length; i++) {
            inter += a[i] && b[i] ? 1 : 0;
            union += a[i] || b[i] ? 1 : 0;
        }
        return (float) inter / Math.max(union, 1);
    }
}
