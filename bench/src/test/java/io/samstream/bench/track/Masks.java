package io.samstream.bench.track;

/** Small masks drawn as text for tests: one string per row, '#' foreground. */
final class Masks {
    private Masks() {}

    static boolean[] of(String... rows) {
        int w = rows[0].length();
        boolean[] m = new boolean[w * rows.length];
        for (int y = 0; y < rows.length; y++) {
            if (rows[y].length() != w) {
                throw new IllegalArgumentException("row " + y + " is not " + w + " wide");
            }
            for (int x = 0; x < w; x++) {
                m[y * w + x] = rows[y].charAt(x) == '#';
            }
        }
        return m;
    }

    /** A filled rectangle x0 <= x < x1, y0 <= y < y1 in a w x h mask. */
    static boolean[] rect(int w, int h, int x0, int y0, int x1, int y1) {
        boolean[] m = new boolean[w * h];
        for (int y = y0; y < y1; y++) {
            for (int x = x0; x < x1; x++) {
                m[y * w + x] = true;
            }
        }
        return m;
    }
}
