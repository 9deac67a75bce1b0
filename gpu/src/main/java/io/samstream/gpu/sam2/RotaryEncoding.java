package io.samstream.gpu.sam2;

/**
 * The 2-D axial rotary position encoding of the memory attention ({@code compute_axial_cis} and
 * {@code apply_rotary_enc}): a token at (x, y) of a w x w map rotates each pair (v[2j], v[2j+1]) of a head's
 * vector by an angle, x * f_j for the first quarter of the pairs... precisely: pairs j < d/4 by x * f_j, pairs
 * d/4 <= j < d/2 by y * f_(j - d/4), with f_j = 1 / 10000^(4j / d) and d the head width.
 *
 * <p>Keys longer than the map (several memory frames) repeat the map's angles ({@code rope_k_repeat}); the
 * object-pointer tokens at the end of the keys are not rotated.
 */
public final class RotaryEncoding {
    private final int headDim;
    private final int tokens;
    /** cos and sin per token and pair: [tokens, headDim/2]. */
    private final float[] cos;
    private final float[] sin;

    public RotaryEncoding(int headDim, int side, double theta) {
        this(headDim, side, theta, 1.0);
    }

    /**
     * With positions scaled by {@code positionScale} (x * scale, y * scale, in float as torch): SAM 3's ViT
     * interpolates its global blocks' positions to the window size ({@code use_interp_rope}).
     */
    public RotaryEncoding(int headDim, int side, double theta, double positionScale) {
        if (headDim % 4 != 0) {
            throw new IllegalArgumentException("RoPE needs a head width divisible by 4, got " + headDim);
        }
        this.headDim = headDim;
        this.tokens = side * side;
        int quarter = headDim / 4;
        float[] freqs = new float[quarter];
        for (int j = 0; j < quarter; j++) {
            freqs[j] = (float) (1.0 / (float) Math.pow(theta, (float) (4 * j) / headDim));
        }
        int pairs = headDim / 2;
        cos = new float[tokens * pairs];
        sin = new float[tokens * pairs];
        for (int t = 0; t < tokens; t++) {
            float tx = (t % side) * (float) positionScale;
            float ty = (t / side) * (float) positionScale;
            for (int j = 0; j < quarter; j++) {
                float ax = tx * freqs[j];
                float ay = ty * freqs[j];
                cos[t * pairs + j] = (float) Math.cos(ax);
                sin[t * pairs + j] = (float) Math.sin(ax);
                cos[t * pairs + quarter + j] = (float) Math.cos(ay);
                sin[t * pairs + quarter + j] = (float) Math.sin(ay);
            }
        }
    }

    public int tokens() {
        return tokens;
    }

    /** cos of each token's angle per pair, {@code [tokens, headDim/2]} (a copy). */
    public float[] cosTable() {
        return cos.clone();
    }

    /** sin of each token's angle per pair, {@code [tokens, headDim/2]} (a copy). */
    public float[] sinTable() {
        return sin.clone();
    }

    /**
     * Rotates, in place, the first {@code rotated} rows of x [rows, heads * headDim]; row r takes the angles of
     * map token r mod tokens. {@code rotated} must be a multiple of the map's tokens.
     */
    public void apply(float[] x, int rotated, int heads) {
        if (rotated % tokens != 0) {
            throw new IllegalArgumentException(rotated + " rotated tokens for a map of " + tokens);
        }
        int pairs = headDim / 2;
        int width = heads * headDim;
        for (int r = 0; r < rotated; r++) {
            int t = r % tokens;
            for (int h = 0; h < heads; h++) {
                int o = r * width + h * headDim;
                for (int j = 0; j < pairs; j++) {
                    float c = cos[t * pairs + j];
                    float s = sin[t * pairs + j];
                    float a = x[o + 2 * j];
                    float b = x[o + 2 * j + 1];
                    x[o + 2 * j] = a * c - b * s;
                    x[o + 2 * j + 1] = a * s + b * c;
                }
            }
        }
    }
}
