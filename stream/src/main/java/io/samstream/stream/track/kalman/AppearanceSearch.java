package io.samstream.stream.track.kalman;

import io.samstream.config.EngineSettings;
import io.samstream.gpu.model.EmbeddingPool;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.SamBackend;
import io.samstream.stream.track.FrameGeometry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appearance search ({@code reid-search}): where to probe for a lost track besides its last box. A box of its last
 * clear size, centred on the image cell that looks most like it ({@link SamBackend#cellSimilarities}: the mean
 * embedding of an object-sized window around each cell against the track's seed and running looks), at least {@code
 * min-appearance}, among the cells it could have reached since it was last seen: {@code min(reid-search,
 * reid-search-speed x frames since seen)} object sizes from its last box, so that a look-alike across the image is not
 * taken for an object that left a few frames ago (bench/results/track-eval-hard-5.md). Windows more than {@value
 * Reidentification#MAX_OVERLAP} under live objects' predicted masks are skipped (a probe there would find them), and
 * so is a best cell inside the last box (the probe there covers it).
 */
final class AppearanceSearch {
    private static final Logger log = LoggerFactory.getLogger(AppearanceSearch.class);

    /** Where to probe for a lost track: a box in pixels. */
    record Lead(Track track, double[] box) {}

    private final String stream;
    private final SamBackend backend;
    private final EngineSettings.Tracking settings;

    AppearanceSearch(String stream, SamBackend backend, EngineSettings.Tracking settings) {
        this.stream = stream;
        this.backend = backend;
        this.settings = settings;
    }

    /** How far (pixels) the point (x, y) lies from {@code box}: 0 inside it. */
    static double distance(double[] box, double x, double y) {
        return Math.hypot(Math.max(0, Math.max(box[0] - x, x - box[2])), Math.max(0, Math.max(box[1] - y, y - box[3])));
    }

    /**
     * The leads for the ghosts probed at their last box on {@code frame}, in order (none for a ghost without an
     * appearance memory or a cell that looks enough like it within reach).
     *
     * @param work          the frame's jobs so far: live tracks' previous masks are where the search does not look
     * @param lastImageMean the previous frame's image mean, what looks are compared against; null: no search
     */
    List<Lead> search(long frame, List<Reidentification.Ghost> probed, ImageEmbedding embedding, List<Work> work,
            FrameGeometry geometry, float[] lastImageMean) {
        if (settings.reidSearch() <= 0 || probed.isEmpty() || lastImageMean == null) {
            return List.of();
        }
        int side = backend.config().embeddingSize();
        double cell = (double) backend.config().imageSize() / side;
        int cols = (int) Math.ceil(geometry.resized().width() / cell);
        int rows = (int) Math.ceil(geometry.resized().height() / cell);
        List<EmbeddingPool.CellRequest> requests = new ArrayList<>();
        List<Reidentification.Ghost> asked = new ArrayList<>();
        double cw = cell * geometry.width() / geometry.resized().width(); // a cell in pixels
        double ch = cell * geometry.height() / geometry.resized().height();
        for (Reidentification.Ghost g : probed) {
            if (g.track().remembers()) {
                asked.add(g);
                double[] size = g.track().clearSize();
                int wc = Math.max(1, (int) Math.round(size[0] / cw));
                int wr = Math.max(1, (int) Math.round(size[1] / ch));
                requests.add(new EmbeddingPool.CellRequest(embedding, g.track().seedLook(), lastImageMean, cols, rows,
                        wc, wr));
                requests.add(new EmbeddingPool.CellRequest(embedding, g.track().runningLook(), lastImageMean, cols,
                        rows, wc, wr));
            }
        }
        if (asked.isEmpty()) {
            return List.of();
        }
        List<float[]> maps = backend.cellSimilarities(requests);
        // How much of each cell live objects' masks cover, as their prompts predict them.
        float[] live = new float[side * side];
        for (Work w : work) {
            if (!w.probe && w.previous != null) {
                float[] c = LowResMask.cellWeights(w.previous, geometry.lowResSize(), side);
                for (int k = 0; k < c.length; k++) {
                    live[k] = Math.min(1f, live[k] + c[k]);
                }
            }
        }
        List<Lead> out = new ArrayList<>();
        for (int i = 0; i < asked.size(); i++) {
            Reidentification.Ghost g = asked.get(i);
            float[] a = maps.get(2 * i);
            float[] b = maps.get(2 * i + 1);
            Track t = g.track();
            double[] last = t.box();
            double[] size = t.clearSize();
            double objectSize = Math.max(size[0], size[1]);
            double reach = Math.min(settings.reidSearch(), settings.reidSearchSpeed() * (frame - g.seenFrame()))
                    * objectSize;
            // A window more than MAX_OVERLAP under live objects would find them, not this one (the re-id rule).
            int wc = requests.get(2 * i).windowCols();
            int wr = requests.get(2 * i).windowRows();
            boolean[] taken = new boolean[cols * rows];
            for (int y = 0; y < rows; y++) {
                for (int x = 0; x < cols; x++) {
                    double sum = 0;
                    int n = 0;
                    for (int v = EmbeddingPool.windowStart(y, wr); v <= EmbeddingPool.windowEnd(y, wr, rows); v++) {
                        for (int u = EmbeddingPool.windowStart(x, wc); u <= EmbeddingPool.windowEnd(x, wc, cols); u++) {
                            sum += live[v * side + u];
                            n++;
                        }
                    }
                    taken[y * cols + x] = sum > Reidentification.MAX_OVERLAP * n;
                }
            }
            int best = -1;
            double bestSim = settings.minAppearance();
            double atLast = Double.NEGATIVE_INFINITY;
            for (int y = 0; y < rows; y++) {
                double cy = (y + 0.5) * ch;
                for (int x = 0; x < cols; x++) {
                    double cx = (x + 0.5) * cw;
                    double sim = Math.max(a[y * cols + x], b[y * cols + x]);
                    if (distance(last, cx, cy) == 0) {
                        atLast = Math.max(atLast, sim);
                    }
                    if (sim > bestSim && distance(last, cx, cy) <= reach && !taken[y * cols + x]) {
                        bestSim = sim;
                        best = y * cols + x;
                    }
                }
            }
            if (best < 0) {
                continue;
            }
            double cx = (best % cols + 0.5) * cw;
            double cy = (best / cols + 0.5) * ch;
            if (distance(last, cx, cy) == 0) {
                continue; // the probe at its last box looks there already
            }
            double[] box = {cx - size[0] / 2, cy - size[1] / 2, cx + size[0] / 2, cy + size[1] / 2};
            log.debug("stream {}: lost object {} at frame {}: searched at ({}, {}), appearance {} ({} at its last box), "
                    + "{} frames since seen, {} px from its last box {}", stream, t.id(), frame, (int) cx, (int) cy,
                    String.format(Locale.ROOT, "%.2f", bestSim), String.format(Locale.ROOT, "%.2f", atLast),
                    frame - g.seenFrame(), (int) distance(last, cx, cy), Arrays.toString(last));
            out.add(new Lead(t, box));
        }
        return out;
    }
}
