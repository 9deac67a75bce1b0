package io.samstream.gpu.sam3.video;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A concept's published objects on a frame, as Meta's {@code build_outputs} and {@code _postprocess_output} make
 * them: each tracked object's low-resolution mask (holes filled, suppression applied) and each new object's
 * detection mask (holes filled) upsampled bilinearly to the frame's size and thresholded at 0; objects removed on
 * this frame and empty masks left out; boxes from the masks; then the masks made disjoint, a shared pixel going to
 * the object with the highest tracker score.
 */
final class FrameOutputs {
    private FrameOutputs() {}

    record Frame(List<TrackedObject> objects) {}

    /** {@code trackScores}: the tracks' starting detection scores, in {@code trackIds}' order. */
    static Frame build(Concept concept, List<Long> trackIds, float[] trackScores, Propagation[] props, float[][] masks,
            Set<Long> removed,
            List<Detection> fresh, List<Long> freshIds, int low, int width, int height, int fillHoleArea) {
        List<Long> ids = new ArrayList<>();
        List<boolean[]> bins = new ArrayList<>();
        List<Float> trackerScores = new ArrayList<>();
        List<Float> scores = new ArrayList<>();
        for (int i = 0; i < trackIds.size(); i++) {
            if (removed.contains(trackIds.get(i))) {
                continue;
            }
            boolean[] m = MaskOverlaps.binary(MaskResize.bilinear(masks[i], low, low, height, width));
            if (MaskOverlaps.area(m) == 0) {
                continue;
            }
            ids.add(trackIds.get(i));
            bins.add(m);
            trackerScores.add(Propagation.sigmoid(props[i].objectScore()));
            scores.add(trackScores[i]);
        }
        for (int j = 0; j < fresh.size(); j++) {
            float[] filled = HoleFilling.fill(fresh.get(j).maskLogits(), low, low, fillHoleArea);
            boolean[] m = MaskOverlaps.binary(MaskResize.bilinear(filled, low, low, height, width));
            if (MaskOverlaps.area(m) == 0) {
                continue;
            }
            ids.add(freshIds.get(j));
            bins.add(m);
            trackerScores.add(fresh.get(j).score());
            scores.add(fresh.get(j).score());
        }
        float[] ts = new float[trackerScores.size()];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = trackerScores.get(i);
        }
        List<int[]> boxes = new ArrayList<>();
        for (boolean[] m : bins) {
            boxes.add(box(m, width, height));
        }
        boolean[][] disjoint = MaskOverlaps.objectWise(bins.toArray(new boolean[0][]), ts);
        List<TrackedObject> out = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            out.add(new TrackedObject(ids.get(i), concept, scores.get(i), ts[i], boxes.get(i), disjoint[i], width,
                    height));
        }
        return new Frame(out);
    }

    /** [x0, y0, x1, y1] of the set pixels, right and bottom exclusive (zeros when empty). */
    static int[] box(boolean[] m, int width, int height) {
        int x0 = width;
        int y0 = height;
        int x1 = -1;
        int y1 = -1;
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                if (m[y * width + x]) {
                    x0 = Math.min(x0, x);
                    y0 = Math.min(y0, y);
                    x1 = Math.max(x1, x);
                    y1 = Math.max(y1, y);
                }
            }
        }
        return x1 < 0 ? new int[4] : new int[] {x0, y0, x1 + 1, y1 + 1};
    }
}
