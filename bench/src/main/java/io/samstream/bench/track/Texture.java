package io.samstream.bench.track;

import io.samstream.connectors.video.PatternPainter;
import java.util.Random;

/**
 * Background textures for {@link SceneClip}, in the range of the demo model's training backgrounds
 * ({@code tools/demo_model/scenes.py}, "mixed": blocky noise of 2-16 px cells, fine checkers, smooth
 * gradients; amplitudes well below the shapes' contrast) plus coarser stripes and checkers, which that
 * training did not show on backgrounds (a harder, more object-like texture). Each draws its numbers from the
 * {@link Random} it is given, so a seed gives the same pixels.
 */
public enum Texture {
    /** The test pattern's own background ({@link PatternPainter#texturedBackground}). */
    PATTERN,
    /** Blocky noise in cells of 3-12 px over a base colour, each channel on its own a little. */
    NOISE,
    /** Soft stripes at an angle, period 10-24 px, over a gentle gradient. */
    STRIPES,
    /** A smooth two-direction colour gradient with faint fine noise. */
    GRADIENT,
    /** A checkerboard of 10-20 px cells at low contrast, with faint noise. */
    CHECKER;

    /** A {@code width x height} RGB24 background, row-major. */
    public byte[] paint(int width, int height, Random random) {
        if (this == PATTERN) {
            return PatternPainter.texturedBackground(width, height, random);
        }
        int[] base = {60 + random.nextInt(110), 60 + random.nextInt(110), 60 + random.nextInt(110)};
        double angle = random.nextDouble() * Math.PI;
        double period = 10 + random.nextInt(15);
        int cell = this == NOISE ? 3 + random.nextInt(10) : 10 + random.nextInt(11);
        double amplitude = switch (this) {
            case NOISE -> 18 + random.nextInt(12);
            case STRIPES -> 22 + random.nextInt(10);
            case CHECKER -> 14 + random.nextInt(10);
            default -> 0;
        };
        double[] gradient = {25 + 20 * random.nextDouble(), 25 + 20 * random.nextDouble(), 25 + 20 * random.nextDouble()};
        double[] gradientAngle = {random.nextDouble() * 2 * Math.PI, random.nextDouble() * 2 * Math.PI,
                random.nextDouble() * 2 * Math.PI};
        int cellsX = width / cell + 1;
        int cellsY = height / cell + 1;
        int[][] blocks = new int[3][cellsX * cellsY];
        for (int c = 0; c < 3; c++) {
            for (int i = 0; i < blocks[c].length; i++) {
                blocks[c][i] = this == NOISE ? (int) Math.round((random.nextDouble() * 2 - 1) * amplitude) : 0;
            }
        }
        int[] fine = new int[width * height];
        for (int i = 0; i < fine.length; i++) {
            fine[i] = random.nextInt(7) - 3;
        }
        double ca = Math.cos(angle);
        double sa = Math.sin(angle);
        byte[] rgb = new byte[3 * width * height];
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                double u = (double) x / width;
                double v = (double) y / height;
                int cellIndex = (y / cell) * cellsX + x / cell;
                for (int c = 0; c < 3; c++) {
                    double value = base[c];
                    double g = gradient[c] * Math.sin(2 * Math.PI * (u * Math.cos(gradientAngle[c]) + v * Math.sin(
                            gradientAngle[c])) * 0.7 + gradientAngle[c]);
                    switch (this) {
                        case NOISE -> value += 0.4 * g + blocks[c][cellIndex];
                        case STRIPES -> value += 0.5 * g + amplitude * Math.sin(2 * Math.PI * (x * ca + y * sa) / period);
                        case GRADIENT -> value += 1.6 * g;
                        case CHECKER -> value += 0.5 * g + (((x / cell) + (y / cell)) % 2 == 0 ? amplitude : -amplitude);
                        default -> throw new AssertionError(this);
                    }
                    value += fine[y * width + x];
                    rgb[3 * (y * width + x) + c] = (byte) Math.max(0, Math.min(255, (int) Math.round(value)));
                }
            }
        }
        return rgb;
    }
}
