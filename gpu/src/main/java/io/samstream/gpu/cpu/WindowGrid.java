package io.samstream.gpu.cpu;

/**
 * How the image encoder's windowed blocks cut the token grid [h, w] into windows of side {@code size}:
 * the grid is zero-padded at the bottom and right up to multiples of the window (the padding is applied
 * after norm1, so padded tokens hold zeros at the attention's input) and windows are numbered row by row,
 * tokens inside a window row by row too. A global block is the case of one window covering the grid.
 */
final class WindowGrid {
    private final int height;
    private final int width;
    private final int size;
    private final int windowsAcross;
    private final int windowsDown;

    private WindowGrid(int height, int width, int size) {
        if (height <= 0 || width <= 0 || size <= 0) {
            throw new IllegalArgumentException("bad window grid " + height + "x" + width + " window " + size);
        }
        this.height = height;
        this.width = width;
        this.size = size;
        this.windowsDown = (height + size - 1) / size;
        this.windowsAcross = (width + size - 1) / size;
    }

    static WindowGrid windowed(int height, int width, int windowSize) {
        return new WindowGrid(height, width, windowSize);
    }

    /** Global attention: one window, the whole (unpadded) grid. */
    static WindowGrid global(int height, int width) {
        if (height != width) {
            throw new IllegalArgumentException("global attention grid must be square here, got " + height + "x"
                    + width);
        }
        return new WindowGrid(height, width, height);
    }

    int windowCount() {
        return windowsAcross * windowsDown;
    }

    /** Side of a window: its tokens form a size x size grid. */
    int windowSize() {
        return size;
    }

    int tokensPerWindow() {
        return size * size;
    }

    int paddedHeight() {
        return windowsDown * size;
    }

    int paddedWidth() {
        return windowsAcross * size;
    }

    /** The grid token (y * width + x) at position {@code pos} of window {@code window}, or -1 for padding. */
    int tokenAt(int window, int pos) {
        int y = (window / windowsAcross) * size + pos / size;
        int x = (window % windowsAcross) * size + pos % size;
        return (y < height && x < width) ? y * width + x : -1;
    }

    /** window_partition: x [h*w, c] to zero-padded windows [windowCount, size*size, c]. */
    float[] partition(float[] x, int c) {
        int t = tokensPerWindow();
        float[] out = new float[windowCount() * t * c];
        for (int win = 0; win < windowCount(); win++) {
            for (int pos = 0; pos < t; pos++) {
                int token = tokenAt(win, pos);
                if (token >= 0) {
                    System.arraycopy(x, token * c, out, (win * t + pos) * c, c);
                }
            }
        }
        return out;
    }

    /** window_unpartition: windows [windowCount, size*size, c] back to [h*w, c], padding dropped. */
    float[] unpartition(float[] windows, int c) {
        int t = tokensPerWindow();
        float[] out = new float[height * width * c];
        for (int win = 0; win < windowCount(); win++) {
            for (int pos = 0; pos < t; pos++) {
                int token = tokenAt(win, pos);
                if (token >= 0) {
                    System.arraycopy(windows, (win * t + pos) * c, out, token * c, c);
                }
            }
        }
        return out;
    }
}
