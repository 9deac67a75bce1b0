package io.samstream.gpu.sam3.video;

/**
 * A binary mask as bits, 64 pixels a word, with its area: two masks' overlap is an AND and a popcount a word instead
 * of two branches a pixel. For what the per-frame rules compare many times: every detection with every track
 * ({@link Association}), detections with each other (mask NMS), tracks with each other (occlusion). The IoU is
 * intersection / max(union, 1) of the pixel counts: 0 when both masks are empty. A mask keeps the span of its words
 * that hold a pixel, so two masks compare only where their spans meet: an object's rows, not the frame's.
 */
final class PackedMask {
    private final long[] words;
    private final int pixels;
    private final int area;
    /** The first and one past the last word with a pixel set (0, 0 when the mask is empty). */
    private final int from, to;

    private PackedMask(long[] words, int pixels) {
        this.words = words;
        this.pixels = pixels;
        int n = 0, first = -1, last = -1;
        for (int i = 0; i < words.length; i++) {
            if (words[i] != 0) {
                n += Long.bitCount(words[i]);
                last = i;
                if (first < 0) {
                    first = i;
                }
            }
        }
        this.area = n;
        this.from = Math.max(first, 0);
        this.to = last + 1;
    }

    /**
     * The pixels of {@code logits} above 0 (as {@link MaskOverlaps#binary}). A word is built in a register and stored
     * once, its bits set without a branch: a frame packs every detection's mask (hundreds with a loose threshold).
     */
    static PackedMask of(float[] logits) {
        return of(logits, 0, logits.length);
    }

    /** As {@link #of(float[])} for the {@code pixels} values of {@code logits} from {@code from}. */
    static PackedMask of(float[] logits, int from, int pixels) {
        if (from < 0 || pixels < 0 || from > logits.length - pixels) {
            throw new IndexOutOfBoundsException(pixels + " pixels from " + from + " of " + logits.length);
        }
        long[] w = new long[(pixels + 63) >>> 6];
        for (int k = 0; k < w.length; k++) {
            int base = from + (k << 6), end = Math.min(64, pixels - (k << 6));
            long bits = 0;
            for (int b = 0; b < end; b++) {
                bits |= (logits[base + b] > 0 ? 1L : 0L) << b;
            }
            w[k] = bits;
        }
        return new PackedMask(w, pixels);
    }

    static PackedMask of(boolean[] mask) {
        long[] w = new long[(mask.length + 63) >>> 6];
        for (int k = 0; k < w.length; k++) {
            int base = k << 6, end = Math.min(64, mask.length - base);
            long bits = 0;
            for (int b = 0; b < end; b++) {
                bits |= (mask[base + b] ? 1L : 0L) << b;
            }
            w[k] = bits;
        }
        return new PackedMask(w, mask.length);
    }

    int area() {
        return area;
    }

    /** Intersection over union with a mask of as many pixels (0 when both are empty). */
    float iou(PackedMask o) {
        if (o.pixels != pixels) {
            throw new IllegalArgumentException("masks of " + pixels + " and " + o.pixels + " pixels");
        }
        int inter = 0;
        for (int i = Math.max(from, o.from), end = Math.min(to, o.to); i < end; i++) {
            inter += Long.bitCount(words[i] & o.words[i]);
        }
        return (float) inter / Math.max(area + o.area - inter, 1);
    }

    /**
     * {@code iou(o) > threshold} (threshold ≥ 0), without counting when the areas alone rule it out: the intersection
     * is at most the smaller area and the union at least the larger, and float division is monotone, so a ratio of
     * areas at or below the threshold bounds the IoU's float too.
     */
    boolean iouAbove(PackedMask o, float threshold) {
        if ((float) Math.min(area, o.area) / Math.max(Math.max(area, o.area), 1) <= threshold) {
            return false;
        }
        return iou(o) > threshold;
    }
}
