package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.DeviceWeights.Bf16;
import io.samstream.gpu.cuda.kernels.EncoderOpsKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.WeightLayouts;
import io.samstream.gpu.sam3.Sam3Config;
import java.util.ArrayList;
import java.util.List;

/**
 * One of SAM 3's necks ({@code Sam3DualViTDetNeck}, simple feature pyramid; the detector's or the tracker's) on the
 * GPU in bf16 with fp32 accumulation, read the way the CPU reference ({@code sam3.DualNeck}) reads, from the trunk's
 * map {@code [grid², embed]} on the device to the three kept levels:
 * <ol>
 *   <li>4x: a 2x2 stride-2 transposed convolution to embed/2 with GELU, another to embed/4; 2x: one to embed/2; 1x:
 *       the map itself. A transposed convolution is one GEMM of the input pixels by its taps' weights side by side
 *       (bias and GELU in the epilogue) and a scatter of the four taps to their output pixels;</li>
 *   <li>each level: a 1x1 convolution to the detector's width (a GEMM) and a 3x3 one (im2col rows and a GEMM).</li>
 * </ol>
 * The GEMMs want channel counts that are multiples of 8: narrower intermediate widths (embed/4 of a tiny model) are
 * padded with zero weight rows and columns, which leave the result unchanged. The two necks of a model run one after
 * the other on one stream, so they share one {@link Workspace}. A pass allocates nothing. Not thread-safe.
 */
public final class CudaSam3Neck {
    /** The activations a neck's pass needs, sized for one image; shared by the necks of one stream. */
    public record Workspace(DeviceBuffer gemmOut, DeviceBuffer scattered, DeviceBuffer conv1x1, DeviceBuffer rows,
                            DeviceBuffer level0, DeviceBuffer level1, DeviceBuffer level2) {
        /** Allocates it from {@code pool} for the shapes of {@code config}. */
        public static Workspace allocate(DeviceMemoryPool pool, Sam3Config config) {
            Shapes s = new Shapes(config);
            return new Workspace(pool.allocateBf16(s.wide(), "sam3 neck transposed-conv taps"),
                    pool.allocateBf16(s.wide(), "sam3 neck transposed-conv output"),
                    pool.allocateBf16(s.levelValues(0), "sam3 neck 1x1 output"),
                    pool.allocateBf16(9 * s.levelValues(0), "sam3 neck 3x3 rows"),
                    pool.allocateBf16(s.levelValues(0), "sam3 neck level 4x"),
                    pool.allocateBf16(s.levelValues(1), "sam3 neck level 2x"),
                    pool.allocateBf16(s.levelValues(2), "sam3 neck level 1x"));
        }

        /** The level buffers, 4x first. */
        public DeviceBuffer[] levels() {
            return new DeviceBuffer[] {level0, level1, level2};
        }
    }

    /** The widths of a configuration: embed, the padded intermediate widths, the detector's width d, the grid. */
    private record Shapes(int grid, int embed, int half, int quarter, int d) {
        Shapes(Sam3Config c) {
            this(c.vision().grid(), c.vision().embedDim(), CudaSam3Vit.roundUp8(c.vision().embedDim() / 2),
                    CudaSam3Vit.roundUp8(c.vision().embedDim() / 4), c.detector().dModel());
        }

        /** Values of level i (0: 4x) at the detector's width. */
        long levelValues(int i) {
            long side = (long) grid << (2 - i);
            return side * side * d;
        }

        /** The widest transposed-convolution output: the second 4x step's taps, (2 grid)² x 4 x quarter. */
        long wide() {
            long g2 = (long) grid * grid;
            return Math.max(g2 * 4 * half, 4 * g2 * 4 * quarter);
        }
    }

    private final CudaStream stream;
    private final GemmKernels gemm;
    private final EncoderOpsKernels ops;
    private final Shapes shapes;
    private final Workspace ws;
    /** The transposed convolutions (taps side by side, padded widths) and each level's 1x1 and 3x3 convolutions. */
    private final Bf16 up4a, up4b, up2;
    private final Bf16[] conv1x1 = new Bf16[3];
    private final Bf16[] conv3x3 = new Bf16[3];
    private final int[] levelIn;

    /**
     * Uploads the neck under {@code prefix} ({@code Sam3Neck.DETECTOR} or {@code TRACKER}) in bf16 through
     * {@code weights}; its passes use {@code ws}.
     *
     * @throws IllegalArgumentException when the kernels cannot run these shapes ({@link #checkSupported})
     */
    public CudaSam3Neck(StateDict sd, String prefix, Sam3Config config, CudaKernels kernels, CudaStream stream,
                        DeviceWeights weights, Workspace ws) {
        checkSupported(config);
        this.stream = stream;
        this.gemm = GemmKernels.of(kernels);
        this.ops = EncoderOpsKernels.of(kernels);
        this.shapes = new Shapes(config);
        this.ws = ws;
        Shapes s = shapes;
        int e = s.embed;
        up4a = transposed(weights, sd, prefix + "0.dconv_2x2_0", e, e, e / 2, s.half);
        up4b = transposed(weights, sd, prefix + "0.dconv_2x2_1", e / 2, s.half, e / 4, s.quarter);
        up2 = transposed(weights, sd, prefix + "1.dconv_2x2", e, e, e / 2, s.half);
        int[] in = {e / 4, e / 2, e};
        this.levelIn = new int[] {s.quarter, s.half, e};
        for (int i = 0; i < 3; i++) {
            String c1 = prefix + i + ".conv_1x1", c3 = prefix + i + ".conv_3x3";
            conv1x1[i] = new Bf16(weights.bf16(CudaSam3Vit.padColumns(sd.get(c1 + ".weight", s.d, in[i], 1, 1).data(), s.d, in[i],
                    levelIn[i]), c1 + ".weight"), weights.bf16(sd.get(c1 + ".bias", s.d).data(), c1 + ".bias"));
            conv3x3[i] = new Bf16(weights.bf16(WeightLayouts.conv3x3ChannelsLast(
                    sd.get(c3 + ".weight", s.d, s.d, 3, 3).data(), s.d, s.d), c3 + ".weight"),
                    weights.bf16(sd.get(c3 + ".bias", s.d).data(), c3 + ".bias"));
        }
    }

    /**
     * Queues one pass: the trunk's map {@code trunk [grid², embed]} (bf16) to the workspace's levels, channels-last
     * {@code [(4 grid)², d]}, {@code [(2 grid)², d]}, {@code [grid², d]} (bf16).
     */
    public void forward(DeviceBuffer trunk) {
        forward(trunk, ws.levels());
    }

    /** {@link #forward(DeviceBuffer)} into {@code levels} (4x, 2x, 1x: {@link #levelValues} each) instead. */
    public void forward(DeviceBuffer trunk, DeviceBuffer[] levels) {
        Shapes s = shapes;
        int g = s.grid;
        // 4x: embed -> embed/2 (GELU) at 2 grid, -> embed/4 at 4 grid
        upsample(trunk, up4a, g, s.embed, s.half, true);
        upsample(ws.scattered, up4b, 2 * g, s.half, s.quarter, false);
        level(0, ws.scattered, levels[0]);
        // 2x: embed -> embed/2 at 2 grid
        upsample(trunk, up2, g, s.embed, s.half, false);
        level(1, ws.scattered, levels[1]);
        level(2, trunk, levels[2]);
    }

    /** The workspace whose levels a pass leaves. */
    public Workspace workspace() {
        return ws;
    }

    /** Values of level i (0: 4x, 1: 2x, 2: 1x) a pass leaves: its pixels times the detector's width. */
    public long levelValues(int i) {
        return shapes.levelValues(i);
    }

    /** A transposed convolution of {@code x [side², in]} into {@code ws.scattered [(2 side)², out]}. */
    private void upsample(DeviceBuffer x, Bf16 w, int side, int in, int out, boolean gelu) {
        int pixels = side * side;
        gemm.run(stream, x, w.w(), w.b(), null, ws.gemmOut, pixels, 4 * out, in, gelu);
        ops.convTranspose2x2Scatter(stream, ws.gemmOut, ws.scattered, 1, side, side, out);
    }

    /** Level i's 1x1 and 3x3 convolutions of {@code x [side², levelIn[i]]} into {@code out}. */
    private void level(int i, DeviceBuffer x, DeviceBuffer out) {
        int side = shapes.grid << (2 - i);
        int pixels = side * side, d = shapes.d;
        gemm.run(stream, x, conv1x1[i].w(), conv1x1[i].b(), null, ws.conv1x1, pixels, d, levelIn[i], false);
        ops.im2col3x3(stream, ws.conv1x1, ws.rows, 1, side, side, d);
        gemm.run(stream, ws.rows, conv3x3[i].w(), conv3x3[i].b(), null, out, pixels, d, 9 * d, false);
    }

    /**
     * ConvTranspose2d {@code name} ({@code [in, out, 2, 2]}, bias {@code [out]}) as GEMM rows {@code [4 * outPad,
     * inPad]}, tap-major (row {@code tap * outPad + o}), the padding rows and columns zero; the bias per row.
     */
    private static Bf16 transposed(DeviceWeights weights, StateDict sd, String name, int in, int inPad, int out,
                                   int outPad) {
        float[] w = sd.get(name + ".weight", in, out, 2, 2).data();
        float[] b = sd.get(name + ".bias", out).data();
        float[] rows = new float[4 * outPad * inPad];
        float[] bias = new float[4 * outPad];
        for (int tap = 0; tap < 4; tap++) {
            for (int o = 0; o < out; o++) {
                int row = tap * outPad + o;
                bias[row] = b[o];
                for (int c = 0; c < in; c++) {
                    rows[row * inPad + c] = w[(c * out + o) * 4 + tap];
                }
            }
        }
        return new Bf16(weights.bf16(rows, name + ".weight (taps)"), weights.bf16(bias, name + ".bias (taps)"));
    }

    /** Why the kernels cannot run this neck, as an exception naming the width at fault; nothing when they can. */
    public static void checkSupported(Sam3Config config) {
        List<String> problems = new ArrayList<>();
        int e = config.vision().embedDim(), d = config.detector().dModel();
        if (e % 8 != 0) {
            problems.add("ViT width " + e + " (a multiple of 8)");
        }
        if (d % 8 != 0) {
            problems.add("detector width " + d + " (a multiple of 8: the 3x3 convolutions' im2col rows)");
        }
        long pixels = (long) config.vision().grid() << 2;
        if (pixels * pixels > (1L << 22)) {
            problems.add("4x level of " + pixels + " x " + pixels + " pixels (at most 2048 x 2048 for one GEMM)");
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the CUDA SAM 3 neck cannot run " + config.vision() + " / "
                    + config.detector() + ": " + String.join("; ", problems));
        }
    }

    /**
     * Device bytes of one neck's weights (upper bound: fp32-sized bf16 plus alignment) and, separately, of the shared
     * workspace ({@link #workspaceBytes}).
     */
    static long weightBytes(Sam3Config config) {
        Shapes s = new Shapes(config);
        long e = s.embed, d = s.d;
        long[] tensors = {
                4L * s.half * e, 4L * s.half, 4L * s.quarter * s.half, 4L * s.quarter, 4L * s.half * e, 4L * s.half,
                d * s.quarter, d, d * s.half, d, d * e, d, 9 * d * d, d, 9 * d * d, d, 9 * d * d, d};
        long bytes = 0;
        for (long n : tensors) {
            bytes += align(n * 2);
        }
        return bytes;
    }

    /** Device bytes of the workspace the necks share. */
    static long workspaceBytes(Sam3Config config) {
        Shapes s = new Shapes(config);
        return 2 * align(s.wide() * 2) + align(s.levelValues(0) * 2) + align(9 * s.levelValues(0) * 2)
                + align(s.levelValues(0) * 2) + align(s.levelValues(1) * 2) + align(s.levelValues(2) * 2);
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }
}
