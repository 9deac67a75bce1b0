package io.samstream.bench.track;

import java.util.ArrayList;
import java.util.List;

/**
 * F of DAVIS: the contour accuracy of a predicted mask against a ground-truth mask. Each mask's boundary
 * is its set of foreground pixels that touch a background pixel (4-neighbourhood; the image's edge is not
 * a boundary, as a frame's edge cuts an object but is not its contour). A boundary pixel of one mask is
 * matched when a boundary pixel of the other lies within the tolerance (a disc of radius
 * {@code ceil(0.008 * image diagonal)} pixels: 4 at 320x240, as DAVIS's {@code bound_th = 0.008});
 * precision is the matched share of the predicted boundary, recall that of the true boundary, and F is
 * their harmonic mean.
 *
 * <p>Empty cases, as in DAVIS's {@code f_measure}: no boundary on either side counts 1 (the object is absent
 * and nothing was predicted); a boundary on one side only counts 0.
 */
public final class BoundaryF {
    /** DAVIS's {@code bound_th}: the tolerance as a share of the image diagonal. */
    public static final double TOLERANCE_SHARE = 0.008;

    private final int width;
    private final int height;
    private final int tolerance;
    /** The offsets (dx, dy) within the tolerance disc. */
    private final int[][] disc;

    /** With DAVIS's tolerance for this image size. */
    public BoundaryF(int width, int height) {
        this(width, height, (int) Math.ceil(TOLERANCE_SHARE * Math.hypot(width, height)));
    }

    public BoundaryF(int width, int height, int tolerance) {
        if (width <= 0 || height <= 0 || tolerance < 0) {
            throw new IllegalArgumentException("boundary F needs a positive size and a tolerance >= 0, got "
                    + width + "x" + height + ", " + tolerance);
        }
        this.width = width;
        this.height = height;
        this.tolerance = tolerance;
        List<int[]> offsets = new ArrayList<>();
        for (int dy = -tolerance; dy <= tolerance; dy++) {
            for (int dx = -tolerance; dx <= tolerance; dx++) {
                if (dx * dx + dy * dy <= tolerance * tolerance) {
                    offsets.add(new int[] {dx, dy});
                }
            }
        }
        this.disc = offsets.toArray(new int[0][]);
    }

    /** The tolerance, pixels. */
    public int tolerance() {
        return tolerance;
    }

    /** F of a predicted mask against the ground truth (row-major masks of this size). */
    public double of(boolean[] predicted, boolean[] truth) {
        boolean[] pb = boundary(predicted);
        boolean[] tb = boundary(truth);
        long pn = count(pb);
        long tn = count(tb);
        if (pn == 0 && tn == 0) {
            return 1.0;
        }
        if (pn == 0 || tn == 0) {
            return 0.0;
        }
        double precision = (double) matched(pb, tb) / pn;
        double recall = (double) matched(tb, pb) / tn;
        return precision + recall == 0 ? 0.0 : 2 * precision * recall / (precision + recall);
    }

    /** The boundary pixels of a mask: foreground pixels with a background 4-neighbour inside the image. */
    public boolean[] boundary(boolean[] mask) {
        if (mask.length != width * height) {
            throw new IllegalArgumentException("a mask of " + mask.length + " pixels is not " + width + "x" + height);
        }
        boolean[] b = new boolean[mask.length];
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                int p = y * width + x;
                if (mask[p] && ((x > 0 && !mask[p - 1]) || (x + 1 < width && !mask[p + 1])
                        || (y > 0 && !mask[p - width]) || (y + 1 < height && !mask[p + width]))) {
                    b[p] = true;
                }
            }
        }
        return b;
    }

    /** How many boundary pixels of {@code a} have a boundary pixel of {@code b} within the tolerance. */
    private long matched(boolean[] a, boolean[] b) {
        long n = 0;
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                if (a[y * width + x] && near(b, x, y)) {
                    n++;
                }
            }
        }
        return n;
    }

    private boolean near(boolean[] b, int x, int y) {
        for (int[] d : disc) {
            int xx = x + d[0];
            int yy = y + d[1];
            if (xx >= 0 && yy >= 0 && xx < width && yy < height && b[yy * width + xx]) {
                return true;
            }
        }
        return false;
    }

    private static long count(boolean[] m) {
        long n = 0;
        for (boolean v : m) {
            if (v) {
                n++;
            }
        }
        return n;
    }
}
