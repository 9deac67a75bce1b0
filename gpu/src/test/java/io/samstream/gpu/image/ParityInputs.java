package io.samstream.gpu.image;

/**
 * The synthetic inputs of {@code tools/fixtures/make_imaging_fixtures.py}, recomputed in Java: the fixtures
 * store only digests of the reference outputs, so both sides must build identical inputs from this hash.
 */
final class ParityInputs {
    private ParityInputs() {}

    /** The script's {@code mix}: a 32-bit integer hash, all arithmetic modulo 2^32. */
    static int mix(int x, int y, int c, int seed) {
        int h = (x * 0x9E3779B1) ^ (y * 0x85EBCA77) ^ (c * 0xC2B2AE3D) ^ (seed * 0x27D4EB2F);
        h ^= h >>> 15;
        h *= 0x2C1B3C6D;
        h ^= h >>> 12;
        h *= 0x297A2D39;
        h ^= h >>> 15;
        return h;
    }

    /** The script's {@code image(pattern, w, h, seed)}: HWC uint8. */
    static RgbImage image(String pattern, int width, int height, int seed) {
        byte[] rgb = new byte[width * height * 3];
        int i = 0;
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                for (int c = 0; c < 3; c++) {
                    rgb[i++] = (byte) switch (pattern) {
                        case "noise" -> mix(x, y, c, seed) & 0xFF;
                        case "gradient" -> (x * 3 + y * 5 + c * 50 + seed) & 0xFF;
                        case "blocks" -> ((x / 7 + y / 5 + c) % 2) * 200 + 30;
                        default -> throw new IllegalArgumentException(pattern);
                    };
                }
            }
        }
        return new RgbImage(width, height, rgb);
    }

    /** The script's {@code low_res_logits(n, size, seed)}: [n, size, size], (4 * noise + disc) / 400 in float32. */
    static float[] lowResLogits(int n, int size, int seed) {
        float[] out = new float[n * size * size];
        int i = 0;
        for (int m = 0; m < n; m++) {
            for (int y = 0; y < size; y++) {
                for (int x = 0; x < size; x++) {
                    int noise = Integer.remainderUnsigned(mix(x, y, m, seed), 2001) - 1000;
                    int dx = x - 128 - 20 * m;
                    int dy = y - 100;
                    int numerator = 4 * noise + 3600 - dx * dx - dy * dy;
                    out[i++] = (float) numerator / 400f;
                }
            }
        }
        return out;
    }
}
