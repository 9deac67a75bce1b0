package io.samstream.stream.track.kalman;

/**
 * A constant-velocity Kalman filter on an object's box, one step per frame. State: centre (cx, cy), size
 * (w, h) and their velocities; it measures boxes {@code [x0, y0, x1, y1]}. Noise scales with the box's
 * size (as in SORT / DeepSORT), so small and large objects are treated alike: positions are trusted to
 * about 1/20 of the size, velocities to about 1/160 of it per frame.
 */
public final class KalmanBoxFilter {
    private static final int N = 8;
    private static final int M = 4;
    private static final double STD_POSITION = 1.0 / 20;
    private static final double STD_VELOCITY = 1.0 / 160;
    /** Sizes are kept at least this many pixels, so that the noise never vanishes. */
    private static final double MIN_SIZE = 1.0;

    private final double[] x = new double[N];
    private final double[][] p = new double[N][N];

    /** A filter at rest at {@code box} ({@code [x0, y0, x1, y1]}), uncertain about its velocity. */
    public KalmanBoxFilter(double[] box) {
        double[] z = measurement(box);
        System.arraycopy(z, 0, x, 0, M);
        double w = Math.max(z[2], MIN_SIZE);
        double h = Math.max(z[3], MIN_SIZE);
        double[] std = {2 * STD_POSITION * w, 2 * STD_POSITION * h, 2 * STD_POSITION * w, 2 * STD_POSITION * h,
            10 * STD_VELOCITY * w, 10 * STD_VELOCITY * h, 10 * STD_VELOCITY * w, 10 * STD_VELOCITY * h};
        for (int i = 0; i < N; i++) {
            p[i][i] = std[i] * std[i];
        }
    }

    /** Moves the state one frame ahead: x = F x, P = F P F' + Q. */
    public void predict() {
        double w = Math.max(x[2], MIN_SIZE);
        double h = Math.max(x[3], MIN_SIZE);
        for (int i = 0; i < M; i++) {
            x[i] += x[i + M];
        }
        // F = [[I, I], [0, I]]: F P F' written out by blocks.
        double[][] fp = new double[N][N];
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                fp[i][j] = p[i][j] + (i < M ? p[i + M][j] : 0);
            }
        }
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                p[i][j] = fp[i][j] + (j < M ? fp[i][j + M] : 0);
            }
        }
        double[] std = {STD_POSITION * w, STD_POSITION * h, STD_POSITION * w, STD_POSITION * h,
            STD_VELOCITY * w, STD_VELOCITY * h, STD_VELOCITY * w, STD_VELOCITY * h};
        for (int i = 0; i < N; i++) {
            p[i][i] += std[i] * std[i];
        }
        x[2] = Math.max(x[2], MIN_SIZE);
        x[3] = Math.max(x[3], MIN_SIZE);
    }

    /** Moves the box by the camera's motion {@code (dx, dy)} pixels (the object's own velocity is unchanged). */
    public void shift(double dx, double dy) {
        x[0] += dx;
        x[1] += dy;
    }

    /** Corrects the state with a measured box {@code [x0, y0, x1, y1]} (H = [I 0]). */
    public void update(double[] box) {
        double[] z = measurement(box);
        double w = Math.max(x[2], MIN_SIZE);
        double h = Math.max(x[3], MIN_SIZE);
        double[] r = {STD_POSITION * w, STD_POSITION * h, STD_POSITION * w, STD_POSITION * h};
        // S = H P H' + R is P's top-left block plus R.
        double[][] s = new double[M][M];
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < M; j++) {
                s[i][j] = p[i][j];
            }
            s[i][i] += r[i] * r[i];
        }
        double[][] sInv = invert(s);
        // K = P H' S^-1: P's first M columns times S^-1.
        double[][] k = new double[N][M];
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < M; j++) {
                double v = 0;
                for (int l = 0; l < M; l++) {
                    v += p[i][l] * sInv[l][j];
                }
                k[i][j] = v;
            }
        }
        double[] innovation = new double[M];
        for (int i = 0; i < M; i++) {
            innovation[i] = z[i] - x[i];
        }
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < M; j++) {
                x[i] += k[i][j] * innovation[j];
            }
        }
        // P = (I - K H) P: subtract K times P's first M rows.
        double[][] updated = new double[N][N];
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                double v = p[i][j];
                for (int l = 0; l < M; l++) {
                    v -= k[i][l] * p[l][j];
                }
                updated[i][j] = v;
            }
        }
        // Symmetrize against rounding drift.
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                p[i][j] = (updated[i][j] + updated[j][i]) / 2;
            }
        }
        x[2] = Math.max(x[2], MIN_SIZE);
        x[3] = Math.max(x[3], MIN_SIZE);
    }

    /**
     * Stops the size from changing further (its velocity set to 0): while the object is not measured (hidden),
     * a size trend would otherwise be extrapolated frame after frame.
     */
    public void holdSize() {
        x[6] = 0;
        x[7] = 0;
    }

    /** The state's box {@code [x0, y0, x1, y1]} (after {@link #predict}: the prediction). */
    public double[] box() {
        return new double[] {x[0] - x[2] / 2, x[1] - x[3] / 2, x[0] + x[2] / 2, x[1] + x[3] / 2};
    }

    /** The state vector and the covariance rows, flattened ({@code 8 + 64} values): for failover. */
    double[] exportState() {
        double[] out = new double[N + N * N];
        System.arraycopy(x, 0, out, 0, N);
        for (int i = 0; i < N; i++) {
            System.arraycopy(p[i], 0, out, N + i * N, N);
        }
        return out;
    }

    /** Takes up a state {@link #exportState} gave. */
    void importState(double[] state) {
        if (state.length != N + N * N) {
            throw new IllegalArgumentException("a box filter state has " + (N + N * N) + " values, got " + state.length);
        }
        System.arraycopy(state, 0, x, 0, N);
        for (int i = 0; i < N; i++) {
            System.arraycopy(state, N + i * N, p[i], 0, N);
        }
    }

    /** The centre's velocity, pixels per frame {@code [vx, vy]}. */
    public double[] velocity() {
        return new double[] {x[4], x[5]};
    }

    private static double[] measurement(double[] box) {
        if (box.length != 4 || !(box[2] >= box[0]) || !(box[3] >= box[1])) {
            throw new IllegalArgumentException("a box is [x0, y0, x1, y1] with x1 >= x0, y1 >= y0 (finite)");
        }
        return new double[] {(box[0] + box[2]) / 2, (box[1] + box[3]) / 2, box[2] - box[0], box[3] - box[1]};
    }

    /** Gauss-Jordan with partial pivoting; S is symmetric positive definite, so it never meets a zero pivot. */
    private static double[][] invert(double[][] a) {
        int n = a.length;
        double[][] m = new double[n][2 * n];
        for (int i = 0; i < n; i++) {
            System.arraycopy(a[i], 0, m[i], 0, n);
            m[i][n + i] = 1;
        }
        for (int c = 0; c < n; c++) {
            int pivot = c;
            for (int r = c + 1; r < n; r++) {
                if (Math.abs(m[r][c]) > Math.abs(m[pivot][c])) {
                    pivot = r;
                }
            }
            double[] t = m[c];
            m[c] = m[pivot];
            m[pivot] = t;
            double d = m[c][c];
            for (int j = 0; j < 2 * n; j++) {
                m[c][j] /= d;
            }
            for (int r = 0; r < n; r++) {
                if (r != c && m[r][c] != 0) {
                    double f = m[r][c];
                    for (int j = 0; j < 2 * n; j++) {
                        m[r][j] -= f * m[c][j];
                    }
                }
            }
        }
        double[][] inv = new double[n][n];
        for (int i = 0; i < n; i++) {
            System.arraycopy(m[i], n, inv[i], 0, n);
        }
        return inv;
    }
}
