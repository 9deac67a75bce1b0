package io.samstream.stream.track.kalman;

import java.util.function.Predicate;

/**
 * The full box of a partly hidden object, from its visible mask's box.
 *
 * <p>When another object passes in front of an object, the visible mask shrinks from that side: one edge of
 * the measured box moves in while the opposite edge stays where the object is. Fed to the Kalman filter as
 * it is, that box drags the centre back and shrinks the size; the next prompt box then misses the object
 * more, and once it is hidden the filter coasts with the wrong velocity and size and cannot find it again.
 * So, per axis: when the measured extent is smaller than the object's extent when it was last clear of
 * other objects by more than {@link #TOLERANCE} of it, and the strip of the predicted box beyond the edge
 * that moved in more (against the prediction) lies on another object (the caller's test), that edge is
 * taken as hidden and the axis is rebuilt from the other edge, which the object still shows, with the
 * clear extent. The reference is the clear extent, not the prediction: against the prediction a shape
 * that is covered a little more each frame would shrink the filter by just under the tolerance every
 * frame. A box that moves as a whole (motion, a shaking camera) keeps its extent, and a mask that shrinks
 * with nothing next to it (an object moving away, one crossing the frame's edge) is taken as it is.
 */
final class PartialBox {
    /** An axis counts as cut when it lost more than this fraction of its predicted extent. */
    static final double TOLERANCE = 0.1;

    private PartialBox() {}

    /**
     * @param predicted the filter's predicted box {@code [x0, y0, x1, y1]}
     * @param measured  the visible mask's box
     * @param clear     the object's size {@code [w, h]} when it was last seen clear of every other object: the
     *                  extent a hidden edge is put back at (not the prediction's, which may have grown while
     *                  the mask had spilled onto a neighbour)
     * @param covered   whether a strip {@code [x0, y0, x1, y1]} of the predicted box lies under another object
     * @return the measurement for the filter: {@code measured} with hidden edges put back at the clear extent
     */
    static double[] full(double[] predicted, double[] measured, double[] clear, Predicate<double[]> covered) {
        double[] out = measured.clone();
        for (int lo = 0; lo < 2; lo++) {
            int hi = lo + 2;
            double extent = clear[lo];
            double seen = measured[hi] - measured[lo];
            if (extent - seen <= TOLERANCE * extent) {
                continue;
            }
            boolean loCut = measured[lo] - predicted[lo] > predicted[hi] - measured[hi];
            double[] strip = predicted.clone();
            if (loCut) {
                strip[hi] = measured[lo];
            } else {
                strip[lo] = measured[hi];
            }
            if (strip[hi] <= strip[lo] || !covered.test(strip)) {
                continue;
            }
            if (loCut) {
                out[lo] = measured[hi] - extent;
            } else {
                out[hi] = measured[lo] + extent;
            }
        }
        return out;
    }
}
