package io.samstream.gpu.cuda.sam2;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights.Bf16;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.EncoderOpsKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.NormKernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.cuda.kernels.WeightLayouts;
import io.samstream.gpu.sam2.Sam2Config;

/**
 * SAM 2's memory encoder ({@code MemoryEncoder}, with {@code SAM2Base._encode_new_memory}'s mask scaling and
 * no-object embedding) on the GPU, read as the CPU reference ({@code sam2.MemoryEncoder},
 * {@code Sam2Model.encodeMemory}) reads:
 * <ol>
 *   <li>the decoder's low-resolution logits upsampled to the input size, sigmoid (binarized for a mask from
 *       prompts), x20 - 10;</li>
 *   <li>the mask downsampler: stride-2 3x3 convolutions, each with LayerNorm2d and GELU (channels x4; fp32, too
 *       narrow for the GEMMs), then a 1x1 convolution to the hidden width, added to {@code pix_feat_proj} of the
 *       frame's features (GEMMs, the sum in the epilogue);</li>
 *   <li>the fuser's ConvNeXt blocks: depthwise 7x7 → LayerNorm → pwconv1 + GELU → pwconv2, scaled by {@code gamma}
 *       (folded into pwconv2's weight and bias) and added to the block's input in the GEMM's epilogue;</li>
 *   <li>{@code out_proj} to the memory width, plus {@code no_obj_embed_spatial} for an object judged absent.</li>
 * </ol>
 * The memory features come out bf16, as SAM2VideoPredictor stores them. {@code batch} objects go through one pass,
 * each with its own frame features, mask, and flags. Weights and the activations of {@code maxBatch} objects come from
 * the pool. Not thread-safe.
 */
public final class CudaMemoryEncoder {
    private static final float LN2D_EPS = 1e-6f;

    /**
     * A mask-downsampler stage: its convolution as fp32 {@code [out, in, 3, 3]} for the direct kernel, or, when
     * {@code gemm}, as bf16 {@code [out, 3, 3, in]} for im2col rows + a GEMM; its LayerNorm2d in fp32.
     */
    private record Conv(DeviceBuffer w, DeviceBuffer b, DeviceBuffer normG, DeviceBuffer normB, int in, int out,
                        boolean gemm) {}

    private record CxBlock(DeviceBuffer dwW, DeviceBuffer dwB, Bf16 norm, Bf16 pw1, Bf16 pw2) {}

    private final CudaStream stream;
    private final GemmKernels gemm;
    private final NormKernels norm;
    private final Sam2Kernels ops;
    private final EncoderOpsKernels encoderOps;
    private final int s, l, side, c, memDim, kernel, maxBatch;
    /** Rows of the widest im2col of the GEMM stages, per object. */
    private final long rowsPerObject;
    private final Conv[] down;
    private final Bf16 downOut, pixFeatProj, outProj;
    private final CxBlock[] fuser;
    private final DeviceBuffer noObject;
    private final DeviceBuffer maskA, maskB, actA, actB, im2col, downBf16, x, dw, hidden, out;

    public CudaMemoryEncoder(StateDict sd, Sam2Config config, int maxBatch, CudaKernels kernels, CudaStream stream,
                             DeviceMemoryPool pool, PinnedBuffer staging) {
        if (maxBatch < 1) {
            throw new IllegalArgumentException("max batch must be at least 1, got " + maxBatch);
        }
        if (config.downsampleKernel() != 3) {
            throw new IllegalArgumentException("the CUDA memory encoder runs 3x3 mask downsampling, " + config
                    + " has " + config.downsampleKernel());
        }
        this.stream = stream;
        this.gemm = GemmKernels.of(kernels);
        this.norm = NormKernels.of(kernels);
        this.ops = Sam2Kernels.of(kernels);
        this.encoderOps = EncoderOpsKernels.of(kernels);
        this.s = config.imageSize();
        this.l = config.lowResSize();
        this.side = config.featureSize();
        this.c = config.hidden();
        this.memDim = config.memDim();
        this.kernel = config.fuserKernel();
        this.maxBatch = maxBatch;
        DeviceWeights up = new DeviceWeights(pool, stream, staging);
        String p = "memory_encoder.";
        int layers = config.downsampleLayers();
        this.down = new Conv[layers];
        int in = 1;
        int hw = s;
        long rowsNeeded = 0;
        for (int i = 0; i < layers; i++) {
            int o = in * 4;
            String conv = p + "mask_downsampler.encoder." + (3 * i);
            String ln = p + "mask_downsampler.encoder." + (3 * i + 1);
            // A stage wide enough for the GEMM (16-byte rows: 9 * in and out multiples of 8) runs as one.
            boolean asGemm = (9 * in) % 8 == 0 && o % 8 == 0;
            float[] w = sd.get(conv + ".weight", o, in, 3, 3).data();
            hw /= 2;
            if (asGemm) {
                rowsNeeded = Math.max(rowsNeeded, (long) hw * hw * 9 * in);
            }
            down[i] = new Conv(asGemm ? up.bf16(WeightLayouts.conv3x3ChannelsLast(w, o, in), conv + ".weight")
                    : up.f32(w, conv + ".weight"),
                    asGemm ? up.bf16(sd.get(conv + ".bias", o).data(), conv + ".bias")
                    : up.f32(sd.get(conv + ".bias", o).data(), conv + ".bias"),
                    up.f32(sd.get(ln + ".weight", o).data(), ln + ".weight"),
                    up.f32(sd.get(ln + ".bias", o).data(), ln + ".bias"), in, o, asGemm);
            in = o;
        }
        this.rowsPerObject = rowsNeeded;
        if (in % 8 != 0) {
            // the downsampler's 1x1 convolution reads the last stage's channels as its GEMM's k
            throw new IllegalArgumentException("mask downsampler ends at " + in + " channels (not a multiple of 8)");
        }
        this.downOut = up.linearBf16(sd, p + "mask_downsampler.encoder." + (3 * layers), in, c);
        this.pixFeatProj = up.linearBf16(sd, p + "pix_feat_proj", c, c);
        this.fuser = new CxBlock[config.fuserLayers()];
        for (int i = 0; i < fuser.length; i++) {
            String f = p + "fuser.layers." + i + ".";
            float[] gamma = sd.get(f + "gamma", c).data();
            float[] w2 = sd.get(f + "pwconv2.weight", c, 4 * c).data().clone();
            float[] b2 = sd.get(f + "pwconv2.bias", c).data().clone();
            for (int o = 0; o < c; o++) {
                b2[o] *= gamma[o];
                for (int k = 0; k < 4 * c; k++) {
                    w2[o * 4 * c + k] *= gamma[o];
                }
            }
            fuser[i] = new CxBlock(up.f32(sd.get(f + "dwconv.weight", c, 1, kernel, kernel).data(), f + "dwconv.weight"),
                    up.f32(sd.get(f + "dwconv.bias", c).data(), f + "dwconv.bias"), up.normBf16(sd, f + "norm", c),
                    up.linearBf16(sd, f + "pwconv1", c, 4 * c),
                    new Bf16(up.bf16(w2, f + "pwconv2.weight (x gamma)"), up.bf16(b2, f + "pwconv2.bias (x gamma)")));
        }
        this.outProj = up.linearBf16(sd, p + "out_proj", c, memDim);
        this.noObject = up.bf16(sd.get("no_obj_embed_spatial", 1, memDim).data(), "no_obj_embed_spatial");

        long mask = (long) maxBatch * s * s;   // every downsampler stage holds s^2 values per object (4x channels, 1/4 pixels)
        long tokens = (long) maxBatch * side * side;
        maskA = pool.allocate(mask * 4, "memory encoder mask (fp32)");
        maskB = pool.allocate(mask * 4, "memory encoder downsampler (fp32)");
        actA = pool.allocateBf16(mask, "memory encoder downsampler (bf16)");
        actB = pool.allocateBf16(mask, "memory encoder downsampler (bf16)");
        im2col = pool.allocateBf16(Math.max(8, maxBatch * rowsPerObject), "memory encoder im2col rows");
        downBf16 = pool.allocateBf16(tokens * in, "memory encoder downsampled mask");
        x = pool.allocateBf16(tokens * c, "memory encoder x");
        dw = pool.allocateBf16(tokens * c, "memory encoder depthwise");
        hidden = pool.allocateBf16(tokens * 4 * c, "memory encoder pwconv1");
        out = pool.allocateBf16(tokens * memDim, "memory features");
    }

    /** The memory features {@code [batch, side², memDim]} a pass leaves (bf16). */
    public DeviceBuffer output() {
        return out;
    }

    /**
     * Queues one pass for {@code batch} objects: frame features {@code pixFeat [batch, side², hidden]} (bf16), the
     * decoder's low-resolution logits {@code [batch, l, l]} (fp32); per object whether its mask came from prompts
     * (binarized); the decoder's object scores {@code [batch]} (fp32, on the device): an object whose score is not
     * above 0 was judged absent and gets the no-object embedding. Step 1 here, the rest {@link #forwardScaled}'s.
     */
    public void forward(int batch, DeviceBuffer pixFeat, DeviceBuffer logits, boolean[] fromPrompt,
                        DeviceBuffer scores) {
        checkBatch(batch);
        if (fromPrompt.length < batch) {
            throw new IllegalArgumentException("memory encoder pass of " + batch + " object(s) with "
                    + fromPrompt.length + " prompt flags: one for each");
        }
        for (int b = 0; b < batch; b++) {
            long lo = (long) b * l * l * 4, hi = (long) b * s * s * 4;
            ops.scaledMask(stream, logits.slice(lo, (long) l * l * 4, "logits of object " + b), fromPrompt[b],
                    maskA.slice(hi, (long) s * s * 4, "mask of object " + b), 1, l, s);
        }
        forwardScaled(batch, pixFeat, maskA, scores);
    }

    /**
     * Queues one pass for {@code batch} objects whose masks are already scaled at the encoder's square ({@code
     * masks} fp32 {@code [batch, s, s]}, values x20 - 10 as step 1 leaves them: SAM 3's tracker makes them on its
     * own, {@code MemoryMasks}): steps 2 to 4 on the frame features {@code pixFeat} and object scores {@code scores}
     * as {@link #forward} reads them. {@code masks} is only read.
     */
    public void forwardScaled(int batch, DeviceBuffer pixFeat, DeviceBuffer masks, DeviceBuffer scores) {
        checkBatch(batch);
        // Direct stages read and write fp32 (src / dst); a GEMM stage reads the bf16 copy its predecessor left in
        // `bf16In` and writes bf16. The last stage's output goes to downBf16.
        DeviceBuffer src = masks, dst = maskB, bf16In = null;
        int h = s;
        for (int i = 0; i < down.length; i++) {
            Conv cv = down[i];
            boolean last = i == down.length - 1;
            boolean nextGemm = !last && down[i + 1].gemm;
            int oh = h / 2;
            long pixels = (long) batch * oh * oh;
            if (cv.gemm) {
                DeviceBuffer target = last ? downBf16 : bf16In == actA ? actB : actA;
                encoderOps.im2col3x3(stream, bf16In, im2col, batch, h, h, cv.in, 2);
                gemm.run(stream, im2col, cv.w, cv.b, null, target, (int) pixels, cv.out, 9 * cv.in, false);
                ops.layerNormGelu(stream, target, true, cv.normG, cv.normB, null, pixels, cv.out, LN2D_EPS);
                bf16In = target;
            } else {
                ops.conv3x3Stride2(stream, src, cv.w, cv.b, dst, batch, h, h, cv.in, cv.out);
                DeviceBuffer copy = last ? downBf16 : nextGemm ? actA : null;
                ops.layerNormGelu(stream, dst, false, cv.normG, cv.normB, copy, pixels, cv.out, LN2D_EPS);
                bf16In = copy;
                // ping-pong between the encoder's own buffers, never writing the caller's masks
                src = dst;
                dst = src == maskB ? maskA : maskB;
            }
            h = oh;
        }
        if (h != side) {
            throw new IllegalStateException("mask downsampled to " + h + ", features are " + side);
        }
        int rows = batch * side * side;
        int downIn = down[down.length - 1].out;
        gemm.run(stream, pixFeat, pixFeatProj.w(), pixFeatProj.b(), null, x, rows, c, c, false);
        gemm.run(stream, downBf16, downOut.w(), downOut.b(), x, x, rows, c, downIn, false);
        for (CxBlock f : fuser) {
            ops.depthwise(stream, x, f.dwW, f.dwB, dw, batch, side, side, c, kernel);
            norm.layerNorm(stream, dw, f.norm.w(), f.norm.b(), dw, rows, c, LN2D_EPS);
            gemm.run(stream, dw, f.pw1.w(), f.pw1.b(), null, hidden, rows, 4 * c, c, true);
            gemm.run(stream, hidden, f.pw2.w(), f.pw2.b(), x, x, rows, c, 4 * c, false);
        }
        gemm.run(stream, x, outProj.w(), outProj.b(), null, out, rows, memDim, c, false);
        ops.noObjectWhereAbsent(stream, out, noObject, scores, batch, (long) side * side * memDim, memDim);
    }

    private void checkBatch(int batch) {
        if (batch < 1 || batch > maxBatch) {
            throw new IllegalArgumentException("memory encoder pass of " + batch + " object(s), at most " + maxBatch);
        }
    }
}
