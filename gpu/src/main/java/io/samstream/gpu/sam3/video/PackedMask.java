package io.samstream.gpu.sam3.video;

/**
 * A binary mask as bits, 64 pixels a word, with its area: two masks' overlap is an AND and a popcount a word instead
 * of two branches a pixel. For what the per-frame rules compare many times: every detection with every track
 * ({@link Association}), detections with each other (mask NMS), tracks with each other (occlusion). The IoU is
 * intersection / max(union, 1) of the pixel counts: 0 when both masks are empty.
 */
final class PackedMask {
    private final long[] words;
    private final int pixels;
    private final int area;

    private PackedMask(long[] words, int pixels) {
        this.words = words;
        this.pixels = pixels;
        int n = 0;
        for (long w : words) {
            n += Long.bitCount(w);
        }
        this.area = n;
    }

    /** The pixels of {@code logits} above 0 (as {@link MaskOverlaps#binary}). */
    static PackedMask of(float[] logits) {
        long[] w = new long[(logits.length + 63) >>> 6];
        for (int i = 0; i < logits.length; i++) {
            if (logits[i] > 0) {
                w[i >>> 6] |= 1L << i;
            }
        }
        return new PackedMask(w, logits.length);
    }

    static PackedMask of(boolean[] mask) {
        long[] w = new long[(mask.length + 63) >>> 6];
        for (int i = 0; i < mask.length; i++) {
            if (mask[i]) {
                w[i >>> 6] |= 1L << i;
            }
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
        for (int i = 0; i < words.length; i++) {
            inter += Long.bitCount(words[i] & o.words[i]);
        }
        return (float) inter / Math.max(area + o.area - inter, 1);
    }
}
