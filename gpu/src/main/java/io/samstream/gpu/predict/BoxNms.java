package io.samstream.gpu.predict;

import java.util.Arrays;
import java.util.Comparator;

/**
 * Greedy non-maximum suppression of boxes, with torchvision's {@code nms} semantics (what
 * {@code batched_nms} does when every box has the same category, as in automatic mask generation):
 * visit the boxes from the highest score down; keep a box unless its IoU with an already kept box is
 * greater than the threshold. Boxes are {@code [x0, y0, x1, y1]}; area is {@code (x1 - x0) * (y1 - y0)},
 * so a box of zero width or height has area 0 and suppresses nothing but an identical box.
 *
 * <p>Ties in score keep their input order (torchvision's sort leaves that order unspecified).
 */
public final class BoxNms {
    private BoxNms() {}

    /**
     * Indices of the kept boxes, highest score first.
     *
     * @param boxes        {@code [n][4]} boxes as {@code [x0, y0, x1, y1]}
     * @param scores       one score per box
     * @param iouThreshold a box whose IoU with a kept box is above this is dropped
     */
    public static int[] keep(double[][] boxes, float[] scores, double iouThreshold) {
        if (boxes.length != scores.length) {
            throw new IllegalArgumentException(boxes.length + " boxes but " + scores.length + " scores");
        }
        for (int i = 0; i < boxes.length; i++) {
            if (boxes[i] == null || boxes[i].length != 4) {
                throw new IllegalArgumentException("box " + i + " must be [x0, y0, x1, y1]");
            }
        }
        Integer[] order = new Integer[boxes.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        // Stable sort: equal scores keep input order. Float.compare puts NaN above every number; treat
        // a NaN score as the lowest instead (it should never win a suppression).
        Arrays.sort(order, Comparator.comparingDouble((Integer i) -> Float.isNaN(scores[i])
                ? Double.NEGATIVE_INFINITY : scores[i]).reversed());
        boolean[] suppressed = new boolean[boxes.length];
        int[] kept = new int[boxes.length];
        int n = 0;
        for (int a = 0; a < order.length; a++) {
            int i = order[a];
            if (suppressed[i]) {
                continue;
            }
            kept[n++] = i;
            for (int b = a + 1; b < order.length; b++) {
                int j = order[b];
                if (!suppressed[j] && iou(boxes[i], boxes[j]) > iouThreshold) {
                    suppressed[j] = true;
                }
            }
        }
        return Arrays.copyOf(kept, n);
    }

    /** torchvision's {@code box_iou} of two boxes: 0 when the union is empty. */
    public static double iou(double[] a, double[] b) {
        double areaA = (a[2] - a[0]) * (a[3] - a[1]);
        double areaB = (b[2] - b[0]) * (b[3] - b[1]);
        double w = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
        double h = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
        double inter = w * h;
        double union = areaA + areaB - inter;
        return union > 0 ? inter / union : 0;
    }
}
