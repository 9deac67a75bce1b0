package io.samstream.testkit;

import java.nio.charset.StandardCharsets;

/**
 * The fixtures' deterministic random weights ({@code weight_values} in tools/sam2_fixtures/make_sam2_fixtures.py,
 * which tools/sam3_fixtures uses too): per tensor, FNV-1a of its name seeds a splitmix64 counter stream; the top byte
 * k - 128 gives k/128 * 2^-e for tensors of rank >= 2 (2^-e the largest power of two with 3 * 4^e >= fan-in),
 * 1 + k/1024 for 1-D ".weight" tensors (norms), k/1024 for other 1-D tensors, k/128 for the Gaussian matrix.
 */
public final class FixtureWeights {
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private FixtureWeights() {}

    /** FNV-1a (64 bits) of the name's UTF-8 bytes: a tensor's seed. */
    static long fnv1a64(String name) {
        long h = 0xCBF29CE484222325L;
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xFF)) * 0x100000001B3L;
        }
        return h;
    }

    /** The values of tensor {@code name} of {@code shape}, row-major. */
    public static float[] values(String name, int[] shape) {
        int n = 1;
        for (int d : shape) {
            n *= d;
        }
        long seed = fnv1a64(name);
        double scale = 1.0 / 1024;
        double offset = 0;
        if (name.contains("gaussian")) {
            scale = 1.0 / 128;
        } else if (shape.length >= 2) {
            int fanIn = n / shape[0];
            int e = 0;
            while (3L << (2 * e) < fanIn) {
                e++;
            }
            scale = Math.scalb(1.0 / 128, -e);
        } else if (name.endsWith(".weight")) {
            offset = 1;
        }
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            long z = (i + 1L) * GOLDEN + seed;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            z = z ^ (z >>> 31);
            int k = (int) (z >>> 56) - 128;
            out[i] = (float) (offset + k * scale);
        }
        return out;
    }
}
