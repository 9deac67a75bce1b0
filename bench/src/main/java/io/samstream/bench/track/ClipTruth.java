package io.samstream.bench.track;

/**
 * The ground truth of a clip: for every frame, which object each pixel shows (the topmost shape there,
 * or the background). An object's mask is its visible part: what lies inside the frame and is not
 * covered by a shape drawn after it. Besides the labels, per frame and object: the whole shape's area (on
 * an unbounded canvas), the part of it inside the frame (covered or not), and whether the object exists
 * in the scene at all (an object of a scene that ended at a cut does not): these tell why an object is
 * not seen ({@link Exits}).
 */
public final class ClipTruth {
    /** The label of background pixels. */
    public static final byte BACKGROUND = -1;

    private final int width;
    private final int height;
    private final int objects;
    private final byte[][] labels;
    private final int[][] fullArea;
    private final int[][] inFrameArea;
    private final boolean[][] exists;
    private final int[][] visibleArea;

    /**
     * @param labels      per frame, row-major: object index or {@link #BACKGROUND}
     * @param fullArea    per frame and object: its area were it alone on an unbounded canvas
     * @param inFrameArea per frame and object: the part of that area inside the frame, covered or not
     * @param exists      per frame and object: whether the object is in the scene (false before it is
     *                    created or after a scene cut ended it); an object that does not exist has no
     *                    pixels
     */
    public ClipTruth(int width, int height, int objects, byte[][] labels, int[][] fullArea, int[][] inFrameArea,
            boolean[][] exists) {
        this.width = width;
        this.height = height;
        this.objects = objects;
        this.labels = labels;
        this.fullArea = fullArea;
        this.inFrameArea = inFrameArea;
        this.exists = exists;
        this.visibleArea = new int[labels.length][objects];
        if (fullArea.length != labels.length || inFrameArea.length != labels.length || exists.length != labels.length) {
            throw new IllegalArgumentException("labels of " + labels.length + " frames, areas of " + fullArea.length
                    + " / " + inFrameArea.length + ", existence of " + exists.length);
        }
        for (int t = 0; t < labels.length; t++) {
            if (labels[t].length != width * height || fullArea[t].length != objects || inFrameArea[t].length != objects
                    || exists[t].length != objects) {
                throw new IllegalArgumentException("frame " + t + ": labels or areas of the wrong size");
            }
            for (byte b : labels[t]) {
                if (b != BACKGROUND) {
                    visibleArea[t][b]++;
                }
            }
        }
    }

    public int width() {
        return width;
    }

    public int height() {
        return height;
    }

    public int frames() {
        return labels.length;
    }

    public int objects() {
        return objects;
    }

    /** The object shown at pixel {@code (x, y)} of frame {@code t}, or {@link #BACKGROUND}. */
    public int label(int t, int x, int y) {
        return labels[t][y * width + x];
    }

    /** Frame {@code t}'s labels, row-major (a copy). */
    public byte[] labels(int t) {
        return labels[t].clone();
    }

    /** The visible part of {@code object} in frame {@code t}, row-major (all false when it is not seen). */
    public boolean[] mask(int object, int t) {
        byte[] l = labels[t];
        boolean[] m = new boolean[l.length];
        for (int p = 0; p < l.length; p++) {
            m[p] = l[p] == object;
        }
        return m;
    }

    public int visibleArea(int object, int t) {
        return visibleArea[t][object];
    }

    /** The part of the whole shape inside the frame, covered or not (0: wholly outside the frame). */
    public int inFrameArea(int object, int t) {
        return inFrameArea[t][object];
    }

    /** Whether the object is in the scene in frame {@code t} (false after a scene cut that ended it). */
    public boolean exists(int object, int t) {
        return exists[t][object];
    }

    /** Inside the frame and covered by nothing, every pixel of it. */
    public boolean fullyVisible(int object, int t) {
        return visibleArea[t][object] > 0 && visibleArea[t][object] == fullArea[t][object];
    }

    /** The first frame where {@code object} is fully visible, or -1. */
    public int firstFullyVisible(int object) {
        for (int t = 0; t < labels.length; t++) {
            if (fullyVisible(object, t)) {
                return t;
            }
        }
        return -1;
    }

    /** The longest run of consecutive frames in which {@code object} is fully visible, in frames. */
    public int longestFullyVisibleRun(int object) {
        int best = 0;
        int run = 0;
        for (int t = 0; t < labels.length; t++) {
            run = fullyVisible(object, t) ? run + 1 : 0;
            best = Math.max(best, run);
        }
        return best;
    }

    /**
     * The tight box around the visible part, {@code [x0, y0, x1, y1]} in pixel edges (the mask's pixels
     * span {@code x0 <= x < x1}): what a user would draw around it. Null when it is not seen.
     */
    public double[] box(int object, int t) {
        int x0 = Integer.MAX_VALUE;
        int y0 = Integer.MAX_VALUE;
        int x1 = -1;
        int y1 = -1;
        byte[] l = labels[t];
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                if (l[y * width + x] == object) {
                    x0 = Math.min(x0, x);
                    y0 = Math.min(y0, y);
                    x1 = Math.max(x1, x);
                    y1 = Math.max(y1, y);
                }
            }
        }
        return x1 < 0 ? null : new double[] {x0, y0, x1 + 1, y1 + 1};
    }
}
