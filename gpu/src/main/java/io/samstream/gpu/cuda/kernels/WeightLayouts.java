package io.samstream.gpu.cuda.kernels;

/**
 * Checkpoint weights re-laid out on the host, once at load, into the order the kernels read them: a 3x3 convolution
 * as the rows of a GEMM over {@code im2col3x3}'s columns ({@link EncoderOpsKernels}), a 2x2 stride-2 transposed
 * convolution as tap-major GEMM rows whose output the upscaler's scatter reads ({@link DecoderKernels}).
 */
public final class WeightLayouts {
    private WeightLayouts() {}

    /** Conv2d weight {@code [O, C, 3, 3]} to {@code [O, 3, 3, C]}: the column order of {@code im2col3x3}. */
    public static float[] conv3x3ChannelsLast(float[] w, int outC, int inC) {
        float[] r = new float[w.length];
        for (int o = 0; o < outC; o++) {
            for (int c = 0; c < inC; c++) {
                for (int tap = 0; tap < 9; tap++) {
                    r[(o * 9 + tap) * inC + c] = w[(o * inC + c) * 9 + tap];
                }
            }
        }
        return r;
    }

    /**
     * ConvTranspose2d weight {@code [in, out, 2, 2]} as GEMM rows {@code [4*out, in]}, tap-major: row
     * {@code (dy*2 + dx)*out + o}, so that the channels of one output pixel are contiguous in the GEMM output.
     */
    public static float[] convTransposeRows(float[] w, int inC, int outC) {
        float[] r = new float[w.length];
        for (int i = 0; i < inC; i++) {
            for (int o = 0; o < outC; o++) {
                for (int tap = 0; tap < 4; tap++) {
                    r[(tap * outC + o) * inC + i] = w[(i * outC + o) * 4 + tap];
                }
            }
        }
        return r;
    }

    /** The bias of the tap-major rows: b repeated for each of the four taps. */
    public static float[] expandBias(float[] b) {
        float[] r = new float[b.length * 4];
        for (int tap = 0; tap < 4; tap++) {
            System.arraycopy(b, 0, r, tap * b.length, b.length);
        }
        return r;
    }
}
