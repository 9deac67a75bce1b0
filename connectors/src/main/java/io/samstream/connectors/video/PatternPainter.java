package io.samstream.connectors.video;

import java.util.Random;

/**
 * The drawing of the test pattern: its textured background, its four shape kinds and its palette.
 * {@link TestPatternSource} paints with it, and so does whoever renders other scenes of the same visual
 * family (the tracking benchmark's clips in {@code bench/}, whose shapes follow scripted paths and occlude
 * each other): the demo model was trained on exactly this look ({@code tools/demo_model/scenes.py}).
 *
 * <p>Pixel convention: pixel {@code (x, y)} belongs to a shape when its centre {@code (x + 0.5, y + 0.5)}
 * lies inside it ({@link Kind#covers}).
 */
public final class PatternPainter {
    /** The colours of the pattern's shapes, 0xRRGGBB. */
    private static final int[] PALETTE = {0xE63232, 0x32C850, 0x3C64F0, 0xF0D228, 0xE650DC, 0x28D2DC};
    /** Side of the background's noise blocks, pixels. */
    private static final int CELL = 8;

    private PatternPainter() {}

    /** The shape kinds; {@code radius} is the half-width of each. */
    public enum Kind {
        DISC, BOX, TRIANGLE, DIAMOND;

        /** Whether the point {@code (dx, dy)} from the shape's centre is inside a shape of this radius. */
        public boolean covers(double radius, double dx, double dy) {
            switch (this) {
                case DISC:
                    return dx * dx + dy * dy <= radius * radius;
                case BOX:
                    return Math.abs(dx) <= radius && Math.abs(dy) <= radius * 0.7;
                case DIAMOND:
                    return Math.abs(dx) + Math.abs(dy) <= radius;
                case TRIANGLE:
                default:
                    // Apex up, base at +0.8r: inside when below the two slanted edges.
                    return dy <= radius * 0.8 && dy >= -radius && Math.abs(dx) <= (dy + radius) * 0.6;
            }
        }
    }

    /** Palette colour {@code i} (taken modulo the palette's size), 0xRRGGBB. */
    public static int paletteColour(int i) {
        return PALETTE[Math.floorMod(i, PALETTE.length)];
    }

    public static int paletteSize() {
        return PALETTE.length;
    }

    /**
     * A smooth colour gradient with blocky noise and a fine checker: texture everywhere, no flat areas.
     * Draws from {@code random} (so the same generator state gives the same pixels). RGB24, row-major.
     */
    public static byte[] texturedBackground(int width, int height, Random random) {
        int cellsX = (width + CELL - 1) / CELL;
        int cellsY = (height + CELL - 1) / CELL;
        int[] noise = new int[cellsX * cellsY];
        for (int i = 0; i < noise.length; i++) {
            noise[i] = random.nextInt(41) - 20;
        }
        double phase = random.nextDouble() * Math.PI * 2;
        byte[] rgb = new byte[3 * width * height];
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                double u = (double) x / width;
                double v = (double) y / height;
                int n = noise[(y / CELL) * cellsX + x / CELL] + (((x >> 1) + (y >> 1)) % 2 == 0 ? 6 : -6);
                int r = 90 + (int) (40 * Math.sin(phase + 2 * Math.PI * u)) + n;
                int g = 100 + (int) (40 * v) + n;
                int b = 110 + (int) (40 * Math.cos(phase + 2 * Math.PI * (u + v) / 2)) + n;
                int at = 3 * (y * width + x);
                rgb[at] = (byte) clamp(r);
                rgb[at + 1] = (byte) clamp(g);
                rgb[at + 2] = (byte) clamp(b);
            }
        }
        return rgb;
    }

    /**
     * Paints a solid shape centred at {@code (cx, cy)} into an RGB24 image, clipped to the image (a shape
     * may lie partly or wholly outside it).
     */
    public static void fill(byte[] rgb, int width, int height, Kind kind, double cx, double cy, double radius,
            int colour) {
        byte r = (byte) (colour >> 16);
        byte g = (byte) (colour >> 8);
        byte b = (byte) colour;
        int y0 = Math.max(0, (int) Math.floor(cy - radius));
        int y1 = Math.min(height - 1, (int) Math.ceil(cy + radius));
        int x0 = Math.max(0, (int) Math.floor(cx - radius));
        int x1 = Math.min(width - 1, (int) Math.ceil(cx + radius));
        for (int y = y0; y <= y1; y++) {
            double dy = y + 0.5 - cy;
            for (int x = x0; x <= x1; x++) {
                double dx = x + 0.5 - cx;
                if (kind.covers(radius, dx, dy)) {
                    int at = 3 * (y * width + x);
                    rgb[at] = r;
                    rgb[at + 1] = g;
                    rgb[at + 2] = b;
                }
            }
        }
    }

    private static int clamp(int value) {
        return Math.max(0, Math.min(255, value));
    }
}
