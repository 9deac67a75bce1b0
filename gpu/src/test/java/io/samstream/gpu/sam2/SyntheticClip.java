package io.samstream.gpu.sam2;

/**
 * The fixtures' generated clip ({@code frame_rgb} / {@code geometry} in tools/sam2_fixtures/make_sam2_fixtures.py),
 * in the same integer arithmetic: a red square moving right behind a gray wall, a green disc moving left, over a
 * gradient with a checker texture.
 */
final class SyntheticClip {
    private SyntheticClip() {}

    /** Red square: cx, cy, half side. */
    static int[] square(int t, int s) {
        return new int[] {s * (25 + 3 * t) / 100, s * 35 / 100, s * 10 / 100};
    }

    /** Green disc: cx, cy, radius. */
    static int[] disc(int t, int s) {
        return new int[] {s * (70 - 2 * t) / 100, s * 65 / 100, s * 12 / 100};
    }

    /** Wall: x0, x1, y0, y1 (exclusive ends). */
    static int[] wall(int s) {
        return new int[] {s * 38 / 100, s * 56 / 100, s * 20 / 100, s * 52 / 100};
    }

    /** Frame t at s x s, interleaved RGB. */
    static byte[] frame(int t, int s) {
        byte[] out = new byte[s * s * 3];
        int cell = Math.max(s / 16, 1);
        int[] a = square(t, s);
        int[] b = disc(t, s);
        int[] w = wall(s);
        for (int y = 0; y < s; y++) {
            for (int x = 0; x < s; x++) {
                int checker = ((x / cell + y / cell) % 2) * 24;
                int r = 40 + (x * 96) / s + checker;
                int g = 60 + (y * 80) / s + checker / 2;
                int bl = 110 + ((x + y) * 40) / (2 * s);
                if ((x - b[0]) * (x - b[0]) + (y - b[1]) * (y - b[1]) <= b[2] * b[2]) {
                    r = 30;
                    g = 200;
                    bl = 60;
                }
                if (Math.abs(x - a[0]) <= a[2] && Math.abs(y - a[1]) <= a[2]) {
                    r = 220;
                    g = 40;
                    bl = 40;
                }
                if (x >= w[0] && x < w[1] && y >= w[2] && y < w[3]) {
                    r = 128;
                    g = 128;
                    bl = 128;
                }
                int o = (y * s + x) * 3;
                out[o] = (byte) r;
                out[o + 1] = (byte) g;
                out[o + 2] = (byte) bl;
            }
        }
        return out;
    }

    static long checksum(byte[] rgb) {
        long sum = 0;
        for (byte v : rgb) {
            sum += v & 0xFF;
        }
        return sum;
    }
}
