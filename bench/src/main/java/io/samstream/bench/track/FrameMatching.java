package io.samstream.bench.track;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which predicted object is which ground-truth object in one frame: pairs with mask IoU >= 0.5, taken
 * greedily from the highest IoU down, each object on either side in one pair at most (two predictions
 * may overlap the same object; only the better one is its match). An object absent from the frame, or a
 * prediction with an empty mask, matches nothing.
 */
public final class FrameMatching {
    /** The IoU from which a prediction counts as finding an object. */
    public static final double MIN_IOU = 0.5;

    private FrameMatching() {}

    /**
     * @param labels    the frame's ground truth: per pixel the object index ({@code 0 .. objects-1}) or any
     *                  negative value for the background
     * @param objects   how many ground-truth objects the clip has
     * @param predicted the frame's predicted masks by object id (row-major, same size as {@code labels})
     * @return ground-truth object -> predicted id
     */
    public static Map<Integer, Integer> match(byte[] labels, int objects, Map<Integer, boolean[]> predicted) {
        long[] truthArea = new long[objects];
        for (byte l : labels) {
            if (l >= 0) {
                truthArea[l]++;
            }
        }
        record Pair(int truth, int id, double iou) {}
        List<Pair> pairs = new ArrayList<>();
        for (Map.Entry<Integer, boolean[]> e : predicted.entrySet()) {
            boolean[] m = e.getValue();
            if (m.length != labels.length) {
                throw new IllegalArgumentException("object " + e.getKey() + ": a mask of " + m.length
                        + " pixels for a frame of " + labels.length);
            }
            long area = 0;
            long[] overlap = new long[objects];
            for (int p = 0; p < m.length; p++) {
                if (m[p]) {
                    area++;
                    if (labels[p] >= 0) {
                        overlap[labels[p]]++;
                    }
                }
            }
            for (int o = 0; o < objects; o++) {
                if (overlap[o] > 0) {
                    double iou = (double) overlap[o] / (area + truthArea[o] - overlap[o]);
                    if (iou >= MIN_IOU) {
                        pairs.add(new Pair(o, e.getKey(), iou));
                    }
                }
            }
        }
        pairs.sort((a, b) -> Double.compare(b.iou(), a.iou()));
        Map<Integer, Integer> match = new HashMap<>();
        Set<Integer> used = new HashSet<>();
        for (Pair p : pairs) {
            if (!match.containsKey(p.truth()) && !used.contains(p.id())) {
                match.put(p.truth(), p.id());
                used.add(p.id());
            }
        }
        return match;
    }
}
