package io.samstream.gpu.sam3.video;

import io.samstream.gpu.cpu.CpuThreadPool;
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
    /** Output rows resized at a time before thresholding. */
    private static final int BAND_ROWS = 16;

    private FrameOutputs() {}

    record Frame(List<TrackedObject> objects) {}

    /** One object's mask at the frame's size, thresholded at 0, with its area and box. */
    private record AtFrame(boolean[] mask, int area, int[] box) {}

    /**
     * {@code trackScores}: the tracks' starting detection scores, in {@code trackIds}' order. Each object's mask is
     * made on its own task of the pool.
     */
    static Frame build(CpuThreadPool pool, Concept concept, List<Long> trackIds, float[] trackScores,
            Propagation[] props, float[][] masks, Set<Long> removed, List<Detection> fresh, List<Long> freshIds,
            int low, int width, int height, int fillHoleArea) {
        int tracked = trackIds.size();
        boolean[] kept = new boolean[tracked];
        for (int i = 0; i < tracked; i++) {
            kept[i] = !removed.contains(trackIds.get(i));
        }
        MaskResize.Bilinear up = new MaskResize.Bilinear(low, low, height, width);
        AtFrame[] at = new AtFrame[tracked + fresh.size()];
        pool.forEach(at.length, j -> {
            if (j >= tracked) {
                float[] filled = HoleFilling.fill(fresh.get(j - tracked).maskLogits(), low, low, fillHoleArea);
                at[j] = atFrame(up, filled, width, height);
            } else if (kept[j]) {
                at[j] = atFrame(up, masks[j], width, height);
            }
        });
        List<Long> ids = new ArrayList<>();
        List<AtFrame> shown = new ArrayList<>();
        List<Float> trackerScores = new ArrayList<>();
        List<Float> scores = new ArrayList<>();
        for (int j = 0; j < at.length; j++) {
            if (at[j] == null || at[j].area() == 0) {
                continue;
            }
            shown.add(at[j]);
            if (j < tracked) {
                ids.add(trackIds.get(j));
                trackerScores.add(Propagation.sigmoid(props[j].objectScore()));
                scores.add(trackScores[j]);
            } else {
                Detection d = fresh.get(j - tracked);
                ids.add(freshIds.get(j - tracked));
                trackerScores.add(d.score());
                scores.add(d.score());
            }
        }
        float[] ts = new float[trackerScores.size()];
        boolean[][] disjoint = new boolean[ts.length][];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = trackerScores.get(i);
            disjoint[i] = shown.get(i).mask();
        }
        MaskOverlaps.objectWise(pool, disjoint, ts);
        List<TrackedObject> out = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            out.add(new TrackedObject(ids.get(i), concept, scores.get(i), ts[i], shown.get(i).box(), disjoint[i], width,
                    height));
        }
        return new Frame(out);
    }

    /**
     * Logits [low²] upsampled bilinearly to [height, width] and thresholded at 0, a band of rows at a time; the box
     * is [x0, y0, x1, y1] of the set pixels, right and bottom exclusive (zeros when empty).
     */
    private static AtFrame atFrame(MaskResize.Bilinear up, float[] logits, int width, int height) {
        boolean[] mask = new boolean[width * height];
        float[] band = new float[BAND_ROWS * width];
        int area = 0;
        int x0 = width;
        int y0 = height;
        int x1 = -1;
        int y1 = -1;
        for (int from = 0; from < height; from += BAND_ROWS) {
            int to = Math.min(height, from + BAND_ROWS);
            up.rows(logits, from, to, band, 0);
            for (int y = from; y < to; y++) {
                for (int x = 0; x < width; x++) {
                    if (band[(y - from) * width + x] > 0) {
                        mask[y * width + x] = true;
                        area++;
                        x0 = Math.min(x0, x);
                        y0 = Math.min(y0, y);
                        x1 = Math.max(x1, x);
                        y1 = Math.max(y1, y);
                    }
                }
            }
        }
        int[] box = x1 < 0 ? new int[4] : new int[] {x0, y0, x1 + 1, y1 + 1};
        return new AtFrame(mask, area, box);
    }
}
