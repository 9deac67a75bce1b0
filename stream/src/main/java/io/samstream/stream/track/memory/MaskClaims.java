package io.samstream.stream.track.memory;

import io.samstream.gpu.mask.MaskSummary;
import java.util.List;

/**
 * How {@link MemoryTracker} tells whether a mask claimed on a frame (by an object back from hidden, or a lost one whose
 * memory is kept) lies on another object's region: overlaps counted on the masks' bits.
 */
final class MaskClaims {
    /** A lost object's mask more than this share of which is another published mask, or the other way, is not clear. */
    static final double FOUND_MAX_OVERLAP = 0.3;
    /** An object back from hidden with more than this share of its mask under another shown mask stays hidden. */
    static final double ON_ANOTHER = 0.5;

    private MaskClaims() {}

    /**
     * Whether more than {@value #ON_ANOTHER} of {@code m} lies under one of {@code others}: an object back from
     * hidden with such a mask has slid onto another object (kalman mode's "jumped"), not come out.
     */
    static boolean onAnother(MaskSummary m, List<MaskSummary> others) {
        long[] a = m.columnMajorBits();
        for (MaskSummary o : others) {
            if (intersection(a, o) > ON_ANOTHER * m.area()) {
                return true;
            }
        }
        return false;
    }

    private static long intersection(long[] a, MaskSummary o) {
        long[] b = o.columnMajorBits();
        long inter = 0;
        for (int i = 0; i < a.length; i++) {
            inter += Long.bitCount(a[i] & b[i]);
        }
        return inter;
    }

    /**
     * Whether {@code m} lies clear of every mask in {@code others}: neither more than {@value #FOUND_MAX_OVERLAP}
     * under the other.
     */
    static boolean clearOf(MaskSummary m, List<MaskSummary> others) {
        long[] a = m.columnMajorBits();
        for (MaskSummary o : others) {
            long inter = intersection(a, o);
            if (inter > FOUND_MAX_OVERLAP * m.area() || inter > FOUND_MAX_OVERLAP * o.area()) {
                return false;
            }
        }
        return true;
    }
}
