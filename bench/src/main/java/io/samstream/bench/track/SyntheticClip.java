package io.samstream.bench.track;

import io.samstream.connectors.video.PatternPainter;
import io.samstream.connectors.video.PatternPainter.Kind;
import java.util.List;
import java.util.Random;

/**
 * A short synthetic video with ground truth, in the visual family the demo model was trained on
 * ({@link PatternPainter}: the test pattern's textured background and solid shapes): a few shapes on
 * scripted straight paths, drawn in list order (a later shape covers an earlier one), optionally seen
 * by a shaking camera. Frame {@code t} is a pure function of the clip's definition and seed.
 *
 * <p>Coordinates are those of the scene: a shape at {@code (x, y)} appears at {@code (x - ox, y - oy)} in
 * frame {@code t}, where {@code (ox, oy)} is the camera's offset in that frame (integers in
 * {@code [-shake, shake]}, drawn from the seed; all zero without shake). The background is painted
 * {@code shake} pixels larger on every side and moves with the shapes, so the whole scene jitters.
 */
public final class SyntheticClip implements Clip {
    /**
     * One shape on a straight path: its centre is {@code (x0 + vx t, y0 + vy t)} in frame {@code t}.
     *
     * @param radius half-width, pixels ({@link Kind#covers})
     * @param colour 0xRRGGBB
     */
    public record Shape(Kind kind, int colour, double radius, double x0, double y0, double vx, double vy) {
        public Shape {
            if (!(radius >= 2)) {
                throw new IllegalArgumentException("a shape's radius must be at least 2 pixels, got " + radius);
            }
        }

        double x(int t) {
            return x0 + vx * t;
        }

        double y(int t) {
            return y0 + vy * t;
        }
    }

    private final String name;
    private final int width;
    private final int height;
    private final int frames;
    private final double fps;
    private final long seed;
    private final int shake;
    private final List<Shape> shapes;
    private final byte[] scene;
    private final int[] offsetX;
    private final int[] offsetY;

    /**
     * @param shake the camera's largest offset, pixels (0: a still camera)
     * @param seed  picks the background texture and the camera's offsets
     */
    public SyntheticClip(String name, int width, int height, int frames, double fps, long seed, int shake,
            List<Shape> shapes) {
        if (width < 16 || height < 16 || frames < 1 || !(fps > 0) || shake < 0) {
            throw new IllegalArgumentException("clip " + name + ": needs width, height >= 16, frames >= 1, fps > 0,"
                    + " shake >= 0; got " + width + "x" + height + ", " + frames + " frames, " + fps + " fps, shake "
                    + shake);
        }
        if (shapes.isEmpty() || shapes.size() > Byte.MAX_VALUE) {
            throw new IllegalArgumentException("clip " + name + ": needs 1 to 127 shapes, got " + shapes.size());
        }
        this.name = name;
        this.width = width;
        this.height = height;
        this.frames = frames;
        this.fps = fps;
        this.seed = seed;
        this.shake = shake;
        this.shapes = List.copyOf(shapes);
        Random random = new Random(seed);
        this.scene = PatternPainter.texturedBackground(width + 2 * shake, height + 2 * shake, random);
        this.offsetX = new int[frames];
        this.offsetY = new int[frames];
        for (int t = 0; t < frames && shake > 0; t++) {
            offsetX[t] = random.nextInt(2 * shake + 1) - shake;
            offsetY[t] = random.nextInt(2 * shake + 1) - shake;
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int width() {
        return width;
    }

    @Override
    public int height() {
        return height;
    }

    @Override
    public int frames() {
        return frames;
    }

    @Override
    public double fps() {
        return fps;
    }

    @Override
    public long seed() {
        return seed;
    }

    public int shake() {
        return shake;
    }

    /** The shapes in drawing order; object {@code i} of the ground truth is shape {@code i}. */
    public List<Shape> shapes() {
        return shapes;
    }

    /** The same clip cut to its first {@code n} frames (same pixels, same truth, frame for frame). */
    @Override
    public SyntheticClip firstFrames(int n) {
        if (n < 1 || n > frames) {
            throw new IllegalArgumentException("clip " + name + " has " + frames + " frames, cannot keep " + n);
        }
        return new SyntheticClip(name, width, height, n, fps, seed, shake, shapes);
    }

    @Override
    public String describe() {
        return String.format(java.util.Locale.ROOT, "%dx%d, %d frames, %d objects%s", width, height, frames,
                shapes.size(), shake > 0 ? ", shake " + shake + " px" : "");
    }

    /** The shape's centre in frame {@code t}, frame pixels (it may lie outside the frame). */
    public double[] centre(int object, int t) {
        checkFrame(t);
        Shape s = shapes.get(object);
        return new double[] {s.x(t) - offsetX[t], s.y(t) - offsetY[t]};
    }

    /** The camera's offset in frame {@code t}: {@code [ox, oy]}. */
    public int[] cameraOffset(int t) {
        checkFrame(t);
        return new int[] {offsetX[t], offsetY[t]};
    }

    /** Frame {@code t}: RGB24, rows top to bottom. */
    @Override
    public byte[] render(int t) {
        checkFrame(t);
        int sceneWidth = width + 2 * shake;
        int left = shake + offsetX[t];
        int top = shake + offsetY[t];
        byte[] rgb = new byte[3 * width * height];
        for (int y = 0; y < height; y++) {
            System.arraycopy(scene, 3 * ((top + y) * sceneWidth + left), rgb, 3 * y * width, 3 * width);
        }
        for (int i = 0; i < shapes.size(); i++) {
            Shape s = shapes.get(i);
            double[] c = centre(i, t);
            PatternPainter.fill(rgb, width, height, s.kind(), c[0], c[1], s.radius(), s.colour());
        }
        return rgb;
    }

    /** The ground truth of every frame (computed from the shapes' geometry, not from rendered pixels). */
    @Override
    public ClipTruth truth() {
        byte[][] labels = new byte[frames][];
        int[][] fullArea = new int[frames][shapes.size()];
        int[][] inFrame = new int[frames][shapes.size()];
        boolean[][] exists = new boolean[frames][shapes.size()];
        for (int t = 0; t < frames; t++) {
            byte[] l = new byte[width * height];
            java.util.Arrays.fill(l, ClipTruth.BACKGROUND);
            for (int i = 0; i < shapes.size(); i++) {
                Shape s = shapes.get(i);
                double[] c = centre(i, t);
                int y0 = (int) Math.floor(c[1] - s.radius());
                int y1 = (int) Math.ceil(c[1] + s.radius());
                int x0 = (int) Math.floor(c[0] - s.radius());
                int x1 = (int) Math.ceil(c[0] + s.radius());
                int area = 0;
                // The whole shape, inside the frame or not: "fully visible" compares against this area.
                for (int y = y0; y <= y1; y++) {
                    for (int x = x0; x <= x1; x++) {
                        if (s.kind().covers(s.radius(), x + 0.5 - c[0], y + 0.5 - c[1])) {
                            area++;
                            if (x >= 0 && y >= 0 && x < width && y < height) {
                                l[y * width + x] = (byte) i;
                                inFrame[t][i]++;
                            }
                        }
                    }
                }
                fullArea[t][i] = area;
                exists[t][i] = true;
            }
            labels[t] = l;
        }
        return new ClipTruth(width, height, shapes.size(), labels, fullArea, inFrame, exists);
    }

    private void checkFrame(int t) {
        if (t < 0 || t >= frames) {
            throw new IndexOutOfBoundsException("clip " + name + " has frames 0.." + (frames - 1) + ", not " + t);
        }
    }
}
