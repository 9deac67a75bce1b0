package io.samstream.gpu.cuda.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights.Bf16;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.sam2.FrameFeatures;
import io.samstream.gpu.sam2.PositionEncodings;
import io.samstream.gpu.sam2.Sam2Config;

/**
 * SAM 2's {@code forward_image} on the GPU in bf16: the {@link CudaHiera} trunk, the FPN neck (SAM 2.1's: a 1x1
 * lateral convolution per stage to the hidden width as a GEMM, the stride-32 level summed into the stride-16 one by
 * nearest 2x upsampling, the stride-32 level then dropped), and the mask decoder's {@code conv_s0} / {@code conv_s1}
 * on the two high-resolution levels, as the CPU reference ({@code sam2.Sam2ImageEncoder}) reads.
 *
 * <p>Outputs stay on the device, channels-last bf16 ({@link #top}, {@link #s0}, {@link #s1}); {@link #encode} also
 * brings one image's back as the CPU model's {@link FrameFeatures}. Weights and the activations of {@code maxBatch}
 * images come from the pool. Not thread-safe.
 */
public final class CudaSam2ImageEncoder {
    private record Conv1x1(Bf16 weights, int in, int out) {}

    private final Sam2Config config;
    private final CudaStream stream;
    private final PinnedBuffer staging;
    private final GemmKernels gemm;
    private final Sam2Kernels ops;
    private final CudaHiera trunk;
    /** Lateral convolutions by stage (0: stride 4 ... 3: stride 32); Meta's convs.j works on stage 3 - j. */
    private final Conv1x1[] lateral = new Conv1x1[4];
    private final Conv1x1 convS0, convS1;
    private final DeviceBuffer[] levels = new DeviceBuffer[4];
    private final DeviceBuffer s0, s1;
    private final float[] topPos;
    private final int side;

    public CudaSam2ImageEncoder(StateDict sd, Sam2Config config, int maxBatch, CudaKernels kernels, CudaStream stream,
                                DeviceMemoryPool pool, PinnedBuffer staging) {
        this.config = config;
        this.stream = stream;
        this.staging = staging;
        this.gemm = GemmKernels.of(kernels);
        this.ops = Sam2Kernels.of(kernels);
        this.side = config.imageSize() / 4;
        this.trunk = new CudaHiera(sd, config, maxBatch, kernels, stream, pool, staging);
        DeviceWeights up = new DeviceWeights(pool, stream, staging);
        int c = config.hidden();
        for (int stage = 0; stage < 4; stage++) {
            lateral[stage] = conv(up, sd, "image_encoder.neck.convs." + (3 - stage) + ".conv", config.stageDim(stage), c);
        }
        convS0 = conv(up, sd, "sam_mask_decoder.conv_s0", c, c / 8);
        convS1 = conv(up, sd, "sam_mask_decoder.conv_s1", c, c / 4);
        for (int stage = 0; stage < 4; stage++) {
            int s = side >> stage;
            levels[stage] = pool.allocateBf16((long) maxBatch * s * s * c, "fpn level " + stage);
        }
        s0 = pool.allocateBf16((long) maxBatch * side * side * convS0.out, "conv_s0 features");
        s1 = pool.allocateBf16((long) maxBatch * (side / 2) * (side / 2) * convS1.out, "conv_s1 features");
        this.topPos = PositionEncodings.sine2d(config.featureSize(), config.featureSize(), c);
    }

    /** The fp32 planar images {@code [B, 3, S, S]} a pass reads. */
    public DeviceBuffer input() {
        return trunk.input();
    }

    /** The stride-16 features {@code [B, S/16, S/16, hidden]} (what the memory attention conditions). */
    public DeviceBuffer top() {
        return levels[2];
    }

    /** {@code conv_s0} of the stride-4 level: {@code [B, S/4, S/4, hidden/8]}. */
    public DeviceBuffer s0() {
        return s0;
    }

    /** {@code conv_s1} of the stride-8 level: {@code [B, S/8, S/8, hidden/4]}. */
    public DeviceBuffer s1() {
        return s1;
    }

    /** Queues one pass of {@code batch} images from {@link #input}. */
    public void forward(int batch) {
        trunk.forward(batch);
        for (int stage = 0; stage < 4; stage++) {
            int s = side >> stage;
            apply(lateral[stage], trunk.stage(stage), levels[stage], batch * s * s);
        }
        int s3 = side >> 3;
        ops.upsample2xAdd(stream, levels[3], levels[2], batch, s3, s3, config.hidden());
        apply(convS0, levels[0], s0, batch * side * side);
        apply(convS1, levels[1], s1, batch * (side / 2) * (side / 2));
    }

    /**
     * One image through the encoder (normalized, planar {@code [3, S, S]}), its features brought back as fp32: what
     * the CPU model's {@code encodeImage} returns. Synchronous.
     */
    public FrameFeatures encode(float[] planarImage) {
        return encode(planarImage, () -> forward(1));
    }

    /** As above, the pass queued by {@code pass} (the offload replays its captured graph of {@code forward(1)}). */
    FrameFeatures encode(float[] planarImage, Runnable pass) {
        int s = config.imageSize();
        if (planarImage.length != 3 * s * s) {
            throw new IllegalArgumentException("image of " + planarImage.length + " values for 3 x " + s + " x " + s);
        }
        StagedCopy.uploadF32(stream, staging, planarImage, input());
        pass.run();
        int f = config.featureSize();
        int c = config.hidden();
        float[] top = download(top(), (long) f * f * c);
        float[] high0 = download(s0, (long) side * side * convS0.out);
        float[] high1 = download(s1, (long) (side / 2) * (side / 2) * convS1.out);
        return new FrameFeatures(top, topPos, high0, high1, f);
    }

    private float[] download(DeviceBuffer b, long count) {
        return StagedCopy.downloadBf16(stream, staging, b, count);
    }

    private void apply(Conv1x1 conv, DeviceBuffer in, DeviceBuffer out, int rows) {
        gemm.run(stream, in, conv.weights.w(), conv.weights.b(), null, out, rows, conv.out, conv.in, false);
    }

    private static Conv1x1 conv(DeviceWeights up, StateDict sd, String name, int in, int out) {
        return new Conv1x1(up.linearBf16(sd, name, in, out), in, out);
    }
}
