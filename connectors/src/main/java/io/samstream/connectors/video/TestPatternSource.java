package io.samstream.connectors.video;

import io.samstream.connectors.video.PatternPainter.Kind;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A generated source, pure Java: a few solid coloured shapes (disc, box, triangle, diamond) gliding
 * and bouncing over a textured background, the kind of scene a segmenter finds objects in. Frame
 * {@code i} is a pure function of (seed, size, fps, i): the same seed gives the same pixels on every
 * machine ({@link Random} is specified bit for bit), so tests can compare frames and
 * {@link #objectsAt(long)} gives the ground truth (where each shape is) for prompts and checks. The drawing
 * itself (background, shapes, palette) is {@link PatternPainter}'s.
 *
 * <p>Not live (the default), it makes frames as fast as they are taken, like a file. Live, it paces
 * them at the frame rate in real time, like a camera, and reports {@link #isLive()} true.
 * {@code ptsMillis} is {@code round(index * 1000 / fps)}.
 */
public final class TestPatternSource implements FrameSource {
    /** Endless: {@link #next()} never returns null. */
    public static final long ENDLESS = -1;

    private static final int SHAPE_COUNT = 4;

    private final String streamId;
    private final int width;
    private final int height;
    private final double fps;
    private final long frameCount;
    private final long seed;
    private final boolean live;
    private final byte[] background;
    private final List<Shape> shapes;
    private long nextIndex;
    private long startNanos;
    private boolean closed;

    /**
     * @param frameCount frames before the end, or {@link #ENDLESS}
     * @param seed       picks the background texture and the shapes' colours, sizes, paths
     * @param live       pace frames in real time
     */
    public TestPatternSource(String streamId, int width, int height, double fps, long frameCount, long seed,
            boolean live) {
        this(streamId, width, height, fps, frameCount, seed, live, 1);
    }

    /**
     * As above, the shapes moving {@code speed} times as fast (the same paths: 0.25 crosses the frame in 8 to 24
     * seconds instead of 2 to 6; a slow scene to point at).
     */
    public TestPatternSource(String streamId, int width, int height, double fps, long frameCount, long seed,
            boolean live, double speed) {
        if (width < 16 || height < 16 || width > 8192 || height > 8192) {
            throw new IllegalArgumentException(streamId + ": test pattern size must be 16..8192 pixels a side, got "
                    + width + "x" + height);
        }
        if (!(fps > 0 && fps <= 1000)) {
            throw new IllegalArgumentException(streamId + ": test pattern fps must be in (0, 1000], got " + fps);
        }
        if (!(speed > 0 && speed <= 10)) {
            throw new IllegalArgumentException(streamId + ": test pattern speed must be in (0, 10], got " + speed);
        }
        if (frameCount < 0 && frameCount != ENDLESS) {
            throw new IllegalArgumentException(streamId + ": test pattern frame count must be >= 0, got " + frameCount);
        }
        this.streamId = streamId;
        this.width = width;
        this.height = height;
        this.fps = fps;
        this.frameCount = frameCount;
        this.seed = seed;
        this.live = live;
        Random random = new Random(seed);
        this.background = PatternPainter.texturedBackground(width, height, random);
        this.shapes = shapes(width, height, fps / speed, random);
    }

    @Override
    public VideoFrame next() throws IOException {
        if (closed) {
            throw new IOException(streamId + ": source is closed");
        }
        if (frameCount != ENDLESS && nextIndex >= frameCount) {
            return null;
        }
        long index = nextIndex;
        if (live) {
            waitUntilDue(index);
        }
        nextIndex++;
        return new VideoFrame(streamId, index, ptsMillis(index), Instant.now(), width, height, render(index));
    }

    /** The pixels of frame {@code index}, RGB24; what {@link #next()} returns for it. */
    public byte[] render(long index) {
        byte[] rgb = background.clone();
        for (Shape shape : shapes) {
            shape.draw(rgb, width, height, index);
        }
        return rgb;
    }

    /** Where each shape is in frame {@code index}, in drawing order (later ones cover earlier ones). */
    public List<PatternObject> objectsAt(long index) {
        List<PatternObject> objects = new ArrayList<>(shapes.size());
        for (int i = 0; i < shapes.size(); i++) {
            Shape shape = shapes.get(i);
            double cx = shape.centerX(index);
            double cy = shape.centerY(index);
            int r = shape.radius;
            objects.add(new PatternObject("shape-" + i, shape.kind.name().toLowerCase(java.util.Locale.ROOT),
                    (int) Math.round(cx), (int) Math.round(cy),
                    new int[] {(int) Math.floor(cx - r), (int) Math.floor(cy - r), (int) Math.ceil(cx + r),
                        (int) Math.ceil(cy + r)}, shape.rgb));
        }
        return objects;
    }

    /**
     * One shape of the pattern in one frame.
     *
     * @param id      "shape-0", "shape-1", ...
     * @param kind    disc, box, triangle or diamond
     * @param centerX its centre, pixels (a point inside the shape)
     * @param centerY its centre, pixels
     * @param box     a box around it, {@code [x0, y0, x1, y1]} (may reach past the frame edge by a pixel)
     * @param rgb     its colour, 0xRRGGBB
     */
    public record PatternObject(String id, String kind, int centerX, int centerY, int[] box, int rgb) {
    }

    public long ptsMillis(long index) {
        return Math.round(index * 1000.0 / fps);
    }

    public long seed() {
        return seed;
    }

    @Override
    public boolean isLive() {
        return live;
    }

    @Override
    public String describe() {
        return streamId + " testpattern:" + width + "x" + height + "@" + fps
                + (frameCount == ENDLESS ? "" : "?frames=" + frameCount) + " (seed " + seed + (live ? ", live)" : ")");
    }

    @Override
    public void close() {
        closed = true;
    }

    private void waitUntilDue(long index) throws IOException {
        long now = System.nanoTime();
        if (index == 0 || startNanos == 0) {
            startNanos = now - (long) (index * 1e9 / fps);
            return;
        }
        long due = startNanos + (long) (index * 1e9 / fps);
        long wait = due - now;
        if (wait > 0) {
            try {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException(streamId + ": interrupted while waiting for the next frame");
            }
        }
    }

    private static List<Shape> shapes(int width, int height, double fps, Random random) {
        int first = random.nextInt(PatternPainter.paletteSize());
        Kind[] kinds = Kind.values();
        List<Shape> shapes = new ArrayList<>(SHAPE_COUNT);
        int side = Math.min(width, height);
        for (int i = 0; i < SHAPE_COUNT; i++) {
            int radius = Math.max(3, (int) (side * (0.07 + 0.08 * random.nextDouble())));
            double x0 = radius + random.nextDouble() * Math.max(1, width - 2 * radius);
            double y0 = radius + random.nextDouble() * Math.max(1, height - 2 * radius);
            // Crosses the frame in 2 to 6 seconds whatever the size and rate.
            double speed = side / (2 + 4 * random.nextDouble()) / fps;
            double angle = random.nextDouble() * Math.PI * 2;
            shapes.add(new Shape(kinds[i % kinds.length], PatternPainter.paletteColour(first + i), radius, x0, y0,
                    speed * Math.cos(angle), speed * Math.sin(angle), width, height));
        }
        return shapes;
    }

    /** A shape moving in a straight line and bouncing off the frame's edges. */
    private static final class Shape {
        final Kind kind;
        final int rgb;
        final int radius;
        final double x0;
        final double y0;
        final double vx;
        final double vy;
        final int width;
        final int height;

        Shape(Kind kind, int rgb, int radius, double x0, double y0, double vx, double vy, int width, int height) {
            this.kind = kind;
            this.rgb = rgb;
            this.radius = radius;
            this.x0 = x0;
            this.y0 = y0;
            this.vx = vx;
            this.vy = vy;
            this.width = width;
            this.height = height;
        }

        double centerX(long index) {
            return bounce(x0 + vx * index, radius, width - radius);
        }

        double centerY(long index) {
            return bounce(y0 + vy * index, radius, height - radius);
        }

        /** Folds an unbounded coordinate into [low, high] as a ball bouncing between two walls. */
        private static double bounce(double position, double low, double high) {
            double span = high - low;
            if (span <= 0) {
                return (low + high) / 2;
            }
            double q = (position - low) % (2 * span);
            if (q < 0) {
                q += 2 * span;
            }
            return low + (q <= span ? q : 2 * span - q);
        }

        void draw(byte[] rgb, int width, int height, long index) {
            PatternPainter.fill(rgb, width, height, kind, centerX(index), centerY(index), radius, this.rgb);
        }
    }
}
