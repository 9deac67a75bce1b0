package io.samstream.gpu.sam3.video;

/** Box-shaped masks and logits on a square of side n, for the rules' tests. */
final class Masks {
    private Masks() {}

    /** Pixels x0 <= x < x1, y0 <= y < y1 of an n x n square. */
    static boolean[] box(int n, int x0, int y0, int x1, int y1) {
        boolean[] m = new boolean[n * n];
        for (int y = Math.max(0, y0); y < Math.min(n, y1); y++) {
            for (int x = Math.max(0, x0); x < Math.min(n, x1); x++) {
                m[y * n + x] = true;
            }
        }
        return m;
    }

    /** Logits: +v inside the box, -v outside. */
    static float[] logits(int n, int x0, int y0, int x1, int y1, float v) {
        boolean[] m = box(n, x0, y0, x1, y1);
        float[] out = new float[m.length];
        for (int i = 0; i < m.length; i++) {
            out[i] = m[i] ? v : -v;
        }
        return out;
    }
}
