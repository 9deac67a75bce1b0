package io.samstream.gpu.cuda.sam2;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights.Dense;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.cuda.blocks.CudaTwoWayTransformer;
import io.samstream.gpu.cuda.kernels.DecoderKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.WeightLayouts;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Model;

/**
 * SAM 2.1's prompt encoder (points and boxes), mask decoder and object-pointer head on the GPU, batched over sets
 * (objects of one or several frames) and device-resident from the image embedding to the chosen mask, object score,
 * IoU and object pointer, so that a video step can capture it in one CUDA graph. CPU reference: {@code
 * sam2.Sam2MaskDecoder} with {@code Sam2PromptEncoder} and {@code Sam2Model.heads}.
 *
 * <p><b>Steps</b> ({@link #forward}): prompt tokens [object score, IoU, 4 mask tokens, sparse prompts] (fp32);
 * keys = image embedding + {@code no_mask_embed} (bf16); SAM's two-way transformer ({@link CudaTwoWayTransformer},
 * same weights layout under {@code sam_mask_decoder.transformer.}); the upscaler with the high-resolution features:
 * ConvTranspose 1 (GEMM) → + conv_s1 features → LayerNorm2d → GELU ({@code upscale_ln_gelu} with its skip input),
 * ConvTranspose 2 (GEMM, no GELU) → + conv_s0 features → GELU, read by the mask-logit kernel; the hypernetworks of
 * the 4 mask tokens, the IoU head (sigmoid) and the object-score head (fp32 Linears); then on the device the choice
 * of mask (multimask: best IoU of 1..3; single: mask 0 unless its stability is below 0.98, then the best of 1..3),
 * the -1024 fill of absent objects' masks, {@code obj_ptr_proj} of the chosen token or {@code no_obj_ptr}
 * ({@code sam2_decoder_ops.cuh}).
 *
 * <p>The dense prompt is {@code no_mask_embed} unless the caller gives one (SAM 3's tracker: a detection's mask as
 * the prompt of a new object's pointer); SAM2VideoPredictor's mask inputs skip the decoder. Precision as {@code CudaMaskDecoder}: the image
 * side bf16 with fp32 accumulation, the token side and the masks fp32.
 *
 * <p><b>Memory:</b> weights and the activations of {@code maxSets} sets of up to {@link #MAX_SPARSE} sparse tokens
 * come from the caller's pool at construction ({@link #poolBytes} bounds them); a small pinned buffer of its own
 * stages the prompts. {@link #forward} allocates nothing and never waits for the host. Not thread-safe.
 */
public final class CudaSam2MaskDecoder implements AutoCloseable {
    /** Sparse tokens (points + the padding point) one set may have. */
    public static final int MAX_SPARSE = 32;
    /** Output tokens ahead of the prompts: object score, IoU, 4 mask tokens. */
    private static final int OUT_TOKENS = 6;
    private static final int MASK_TOKENS = 4;
    /** SAM 2's dynamic multimask fallback (Sam2MaskDecoder.STABILITY_DELTA / _THRESH). */
    private static final float STABILITY_DELTA = 0.05f, STABILITY_THRESH = 0.98f;
    private static final float LN2D_EPS = 1e-6f;

    private final int maxSets, c, f, t, l, co1, co2, iouHidden, imageSize;
    private final GemmKernels gemm;
    private final DecoderKernels dk;
    private final CudaStream stream;
    private final CudaTwoWayTransformer transformer;
    private final CudaTwoWayTransformer.Workspace workspace;
    // weights
    private final DeviceBuffer outTokens, gauss, pointEmbed, notAPoint, noMask, densePe, noObjPtr;
    private final DeviceBuffer up1W, up1B, upNormG, upNormB, up2W, up2B;
    private final Dense[][] hyper;
    private final Dense[] iouHead, scoreHead, objPtrProj;
    // prompts: the staged ones, and the no-prompt sets' (uploaded once)
    private final DeviceBuffer coords, codes, noPromptCoords, noPromptCodes;
    private final PinnedBuffer promptStaging;
    private final CudaEvent promptCopied;
    private int stagedSets, stagedSparse;
    // activations
    private final DeviceBuffer tokens, queries, keys, keysPe, wide, hA, hB, hyperOut, iouRaw, scores, masks, chosen,
            ious, ptrTokens, ptrMlp, lowRes, pointers;
    private boolean closed;

    /** Why the decoder kernels cannot run this model's decoder, or null. */
    public static String unsupported(Sam2Config cfg) {
        List<String> problems = new ArrayList<>();
        int dim = cfg.hidden();
        if (dim % 32 != 0 || dim / 8 > DecoderKernels.MAX_UPSCALE2) {
            problems.add("hidden width " + dim + " (the decoder kernels: a multiple of 32 up to "
                    + 8 * DecoderKernels.MAX_UPSCALE2 + ")");
        } else if (DecoderKernels.hdBound(dim / Sam2Config.DECODER_HEADS) < 0
                || DecoderKernels.hdBound(dim / 2 / Sam2Config.DECODER_HEADS) < 0) {
            problems.add("decoder head width " + dim / Sam2Config.DECODER_HEADS + " (up to "
                    + DecoderKernels.ATTN_HD[DecoderKernels.ATTN_HD.length - 1] + ")");
        }
        if (cfg.imageSize() % 16 != 0 || cfg.featureSize() < 1) {
            problems.add("input size " + cfg.imageSize() + " (a multiple of 16)");
        }
        if (cfg.decoderMlp() < 1 || cfg.iouHidden() < 1) {
            problems.add("decoder MLP " + cfg.decoderMlp() + " / IoU head " + cfg.iouHidden());
        }
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    /**
     * An upper bound of the device bytes the constructor takes from the pool for {@code maxSets} sets: weights
     * (fp32 bound) and activations, each 256-byte aligned.
     */
    public static long poolBytes(Sam2Config cfg, int maxSets) {
        long weights = 0;
        int tensors = 0;
        for (int[] shape : io.samstream.gpu.sam2.Sam2Shapes.maskDecoder(cfg).values()) {
            long n = 1;
            for (int d : shape) {
                n *= d;
            }
            weights += n * 4;
            tensors++;
        }
        int dim = cfg.hidden(), fs = cfg.featureSize();
        // the re-laid-out upscaler biases (x4), dense PE, no_mask bf16: generously
        weights += 16L * dim * 4 + (long) fs * fs * dim * 2 + 64L * 256;
        long total = weights + (tensors + 64L) * 256;
        for (long a : activationBytes(cfg, maxSets)) {
            total += BumpAllocator.alignUp(Math.max(a, 1));
        }
        return total;
    }

    /** The activations' bytes in allocation order (see the constructor). */
    private static long[] activationBytes(Sam2Config cfg, int maxSets) {
        long s = maxSets, dim = cfg.hidden(), fs = cfg.featureSize(), t = fs * fs, l = cfg.lowResSize();
        long internal = dim / 2, mlp = cfg.decoderMlp(), rows = s * (OUT_TOKENS + MAX_SPARSE);
        long headWidth = Math.max(dim, cfg.iouHidden());
        long tok = rows * dim * 4;
        return new long[] {s * MAX_SPARSE * 8, s * MAX_SPARSE * 4, s * 2 * 8, s * 2 * 4,   // prompts
                tok, tok, tok, tok, tok, tok, tok, rows * Math.max(mlp, dim) * 4,          // token side
                s * t * dim * 2, s * t * dim * 2, s * t * Math.max(3 * internal, 2 * dim) * 2,   // image side
                s * headWidth * 4, s * headWidth * 4, MASK_TOKENS * s * (dim / 8) * 4, s * 4 * 4, s * 4,
                s * MASK_TOKENS * l * l * 4, s * 4, s * 4, s * dim * 4, s * dim * 4, s * l * l * 4, s * dim * 2};
    }

    public CudaSam2MaskDecoder(StateDict sd, Sam2Config config, int maxSets, CudaKernels kernels, CudaStream stream,
                               DeviceMemoryPool pool, PinnedBuffer staging) {
        String why = unsupported(config);
        if (why != null) {
            throw new IllegalArgumentException("the CUDA SAM 2 mask decoder cannot run " + config + ": " + why);
        }
        if (maxSets < 1) {
            throw new IllegalArgumentException("max sets per batch must be at least 1, got " + maxSets);
        }
        this.maxSets = maxSets;
        this.c = config.hidden();
        this.f = config.featureSize();
        this.t = f * f;
        this.l = config.lowResSize();
        this.co1 = c / 4;
        this.co2 = c / 8;
        this.iouHidden = config.iouHidden();
        this.imageSize = config.imageSize();
        this.gemm = GemmKernels.of(kernels);
        this.stream = stream;
        this.dk = new DecoderKernels(kernels);

        DeviceWeights w = new DeviceWeights(pool, stream, staging);
        String pe = "sam_prompt_encoder.", d = "sam_mask_decoder.";
        float[] ot = new float[OUT_TOKENS * c];
        System.arraycopy(sd.get(d + "obj_score_token.weight", 1, c).data(), 0, ot, 0, c);
        System.arraycopy(sd.get(d + "iou_token.weight", 1, c).data(), 0, ot, c, c);
        System.arraycopy(sd.get(d + "mask_tokens.weight", MASK_TOKENS, c).data(), 0, ot, 2 * c, MASK_TOKENS * c);
        outTokens = w.f32(ot, "output tokens");
        gauss = w.f32(sd.get(pe + "pe_layer.positional_encoding_gaussian_matrix", 2, c / 2).data(), "pe gaussian");
        float[] pts = new float[4 * c];
        for (int i = 0; i < 4; i++) {
            System.arraycopy(sd.get(pe + "point_embeddings." + i + ".weight", 1, c).data(), 0, pts, i * c, c);
        }
        pointEmbed = w.f32(pts, "point_embeddings");
        notAPoint = w.f32(sd.get(pe + "not_a_point_embed.weight", 1, c).data(), "not_a_point_embed");
        noMask = w.bf16(sd.get(pe + "no_mask_embed.weight", 1, c).data(), "no_mask_embed");
        densePe = pool.allocateBf16((long) t * c, "dense pe");
        dk.densePe(stream, gauss, densePe, f, c);
        noObjPtr = w.f32(sd.get("no_obj_ptr", 1, c).data(), "no_obj_ptr");

        up1W = w.bf16(WeightLayouts.convTransposeRows(sd.get(d + "output_upscaling.0.weight", c, co1, 2, 2).data(), c,
                co1), "output_upscaling.0.weight");
        up1B = w.bf16(WeightLayouts.expandBias(sd.get(d + "output_upscaling.0.bias", co1).data()),
                "output_upscaling.0.bias");
        upNormG = w.bf16(sd.get(d + "output_upscaling.1.weight", co1).data(), "output_upscaling.1.weight");
        upNormB = w.bf16(sd.get(d + "output_upscaling.1.bias", co1).data(), "output_upscaling.1.bias");
        up2W = w.bf16(WeightLayouts.convTransposeRows(sd.get(d + "output_upscaling.3.weight", co1, co2, 2, 2).data(),
                co1, co2), "output_upscaling.3.weight");
        up2B = w.bf16(WeightLayouts.expandBias(sd.get(d + "output_upscaling.3.bias", co2).data()),
                "output_upscaling.3.bias");
        hyper = new Dense[MASK_TOKENS][];
        for (int i = 0; i < MASK_TOKENS; i++) {
            hyper[i] = w.mlp(sd, d + "output_hypernetworks_mlps." + i, c, c, co2, 3);
        }
        iouHead = w.mlp(sd, d + "iou_prediction_head", c, iouHidden, MASK_TOKENS, 3);
        scoreHead = w.mlp(sd, d + "pred_obj_score_head", c, c, 1, 3);
        objPtrProj = w.mlp(sd, "obj_ptr_proj", c, c, c, 3);
        transformer = new CudaTwoWayTransformer(w, sd, d + "transformer.",
                new CudaTwoWayTransformer.Shape(c, t, Sam2Config.DECODER_HEADS, 2, config.decoderMlp(), 2),
                CudaTwoWayTransformer.SAM2_MLP, kernels, dk);

        long[] a = activationBytes(config, maxSets);
        int i = 0;
        coords = pool.allocate(a[i++], "sparse coords");
        codes = pool.allocate(a[i++], "sparse codes");
        noPromptCoords = pool.allocate(a[i++], "no-prompt coords");
        noPromptCodes = pool.allocate(a[i++], "no-prompt codes");
        tokens = pool.allocate(a[i++], "tokens");
        queries = pool.allocate(a[i++], "queries");
        DeviceBuffer qtmp = pool.allocate(a[i++], "queries + pe");
        DeviceBuffer qp = pool.allocate(a[i++], "token q");
        DeviceBuffer kp = pool.allocate(a[i++], "token k");
        DeviceBuffer vp = pool.allocate(a[i++], "token v");
        DeviceBuffer attnTok = pool.allocate(a[i++], "token attention out");
        DeviceBuffer hidden = pool.allocate(a[i++], "token mlp hidden");
        keys = pool.allocate(a[i++], "keys");
        keysPe = pool.allocate(a[i++], "keys + pe / upscaled");
        wide = pool.allocate(a[i++], "image projections / upscaler rows");
        hA = pool.allocate(a[i++], "head hidden a");
        hB = pool.allocate(a[i++], "head hidden b");
        hyperOut = pool.allocate(a[i++], "hypernetwork outputs");
        iouRaw = pool.allocate(a[i++], "iou head outputs");
        scores = pool.allocate(a[i++], "object scores");
        masks = pool.allocate(a[i++], "mask logits (4 per set)");
        chosen = pool.allocate(a[i++], "chosen mask");
        ious = pool.allocate(a[i++], "chosen iou");
        ptrTokens = pool.allocate(a[i++], "pointer tokens");
        ptrMlp = pool.allocate(a[i++], "obj_ptr_proj outputs");
        lowRes = pool.allocate(a[i++], "low-res masks");
        pointers = pool.allocate(a[i++], "object pointers (bf16)");
        workspace = new CudaTwoWayTransformer.Workspace(queries, tokens, qtmp, qp, kp, vp, attnTok, hidden, keys, keysPe,
                wide, densePe);

        // The no-prompt sets' tokens: (0, 0) labelled -1 and the padding point, the same for every set.
        float[] npCoords = new float[maxSets * 4];
        int[] npCodes = new int[maxSets * 2];
        for (int s = 0; s < maxSets; s++) {
            npCoords[4 * s] = 0.5f / imageSize;
            npCoords[4 * s + 1] = 0.5f / imageSize;
            npCodes[2 * s] = -1;
            npCodes[2 * s + 1] = -1;
        }
        StagedCopy.uploadF32(stream, staging, npCoords, noPromptCoords);
        staging.buffer().asIntBuffer().put(npCodes);
        stream.upload(staging, 0, noPromptCodes, 0, (long) npCodes.length * 4);
        stream.synchronize();

        CudaContext context = pool.context();
        PinnedBuffer ps = new PinnedBuffer(context, (long) maxSets * MAX_SPARSE * 12, "SAM 2 decoder prompts");
        try {
            promptCopied = new CudaEvent(context, false);
        } catch (RuntimeException | Error ex) {
            ps.close();
            throw ex;
        }
        promptStaging = ps;
    }

    public int maxSets() {
        return maxSets;
    }

    /**
     * Stages (uploads, on the stream, NOT meant for graph capture) the sparse prompts of the next forward: per set its
     * points {@code [n][2]} in model-input pixels and labels (SAM 2 codes: 0/1 points, 2/3 box corners, -1 padding);
     * every set the same n (at most {@link #MAX_SPARSE} - 1); the padding point is added here, as the reference's
     * prompt encoder does. Sets without points (n = 0) are the no-prompt case ({@link #stageNoPrompts}), as in
     * {@code Sam2Model.heads}. Waits, if needed, for the previous staging's copy to leave the pinned buffer.
     */
    public void stagePrompts(float[][][] points, int[][] labels) {
        ensureOpen();
        int sets = points.length;
        if (sets < 1 || sets > maxSets || labels.length != sets) {
            throw new IllegalArgumentException(sets + " point sets with " + labels.length + " label sets; the decoder "
                    + "takes 1 to " + maxSets);
        }
        int n = points[0].length;
        for (int s = 0; s < sets; s++) {
            if (points[s].length != n || labels[s].length != n) {
                throw new IllegalArgumentException("set " + s + " has " + points[s].length + " points and "
                        + labels[s].length + " labels; every set of a batch needs " + n);
            }
            for (int j = 0; j < n; j++) {
                if (points[s][j] == null || points[s][j].length != 2) {
                    throw new IllegalArgumentException("point " + j + " of set " + s + " is not (x, y)");
                }
                int lab = labels[s][j];
                if (lab < -1 || lab > 3) {
                    throw new IllegalArgumentException("point label " + lab + " of set " + s
                            + " (expected -1, 0, 1, 2 or 3)");
                }
            }
        }
        if (n == 0) {
            stageNoPrompts(sets);
            return;
        }
        int ns = n + 1;
        if (ns > MAX_SPARSE) {
            throw new IllegalArgumentException(n + " points per set; the CUDA SAM 2 decoder takes at most "
                    + (MAX_SPARSE - 1));
        }
        promptCopied.synchronize();
        ByteBuffer buf = promptStaging.buffer().order(ByteOrder.LITTLE_ENDIAN);
        long codesAt = (long) sets * ns * 8;
        FloatBuffer cf = buf.asFloatBuffer();
        IntBuffer ci = ((ByteBuffer) buf.duplicate().position((int) codesAt)).slice().order(ByteOrder.LITTLE_ENDIAN)
                .asIntBuffer();
        float size = imageSize;
        for (int s = 0; s < sets; s++) {
            for (int j = 0; j < n; j++) {
                cf.put((points[s][j][0] + 0.5f) / size).put((points[s][j][1] + 0.5f) / size);
                ci.put(labels[s][j]);
            }
            cf.put(0f).put(0f);   // the padding point
            ci.put(-1);
        }
        stream.upload(promptStaging, 0, coords, 0, codesAt);
        stream.upload(promptStaging, codesAt, codes, 0, (long) sets * ns * 4);
        stream.record(promptCopied);
        stagedSets = sets;
        stagedSparse = ns;
    }

    /**
     * Stages {@code sets} sets without a prompt (tracking frames): the (0, 0) point labelled -1 and the padding point
     * ({@code sparse} = 2), copied on the device from tokens uploaded once.
     */
    public void stageNoPrompts(int sets) {
        ensureOpen();
        if (sets < 1 || sets > maxSets) {
            throw new IllegalArgumentException(sets + " sets; the decoder takes 1 to " + maxSets);
        }
        stream.copy(noPromptCoords, coords, (long) sets * 2 * 8);
        stream.copy(noPromptCodes, codes, (long) sets * 2 * 4);
        stagedSets = sets;
        stagedSparse = 2;
    }

    /**
     * Queues the decoder (capturable in a CUDA graph: fixed buffers, no host sync, no allocation) for {@code sets}
     * sets: {@code image} bf16 {@code [sets, f*f, hidden]} (memory-conditioned or with no_mem_embed), {@code s0} bf16
     * {@code [frames, 4f, 4f, hidden/8]}, {@code s1} bf16 {@code [frames, 2f, 2f, hidden/4]}, {@code frameOfSet}
     * device {@code int[sets]} (the frame of s0 / s1 each set reads; one outside the buffers gives NaN masks);
     * {@code sparse} = n + 1 tokens per set, as staged last.
     */
    public void forward(int sets, int sparse, boolean multimask, DeviceBuffer image, DeviceBuffer s0, DeviceBuffer s1,
                        DeviceBuffer frameOfSet) {
        forward(sets, sparse, multimask, image, null, s0, s1, frameOfSet);
    }

    /**
     * As above with a dense prompt: {@code dense} bf16 {@code [sets, f*f, hidden]} (a mask prompt's embedding, made
     * by the caller) added to the image in place of {@code no_mask_embed}; null: {@code no_mask_embed}.
     */
    public void forward(int sets, int sparse, boolean multimask, DeviceBuffer image, DeviceBuffer dense,
                        DeviceBuffer s0, DeviceBuffer s1, DeviceBuffer frameOfSet) {
        ensureOpen();
        if (sets < 1 || sets > maxSets) {
            throw new IllegalArgumentException(sets + " sets; the decoder takes 1 to " + maxSets);
        }
        if (sparse != stagedSparse || sets > stagedSets) {
            throw new IllegalStateException("forward of " + sets + " sets of " + sparse + " sparse tokens, but "
                    + (stagedSets == 0 ? "no prompts were staged" : stagedSets + " sets of " + stagedSparse
                    + " were staged"));
        }
        int nq = OUT_TOKENS + sparse;
        int rows = sets * nq;
        // tokens and keys
        dk.promptTokens(stream, coords, codes, outTokens, gauss, pointEmbed, notAPoint, tokens, sets, OUT_TOKENS - 1,
                sparse, c);
        stream.copy(tokens, queries, (long) rows * c * 4);
        long img = (long) sets * t;
        if (dense == null) {
            dk.addPeriodicTo(stream, image, noMask, keys, img * c, c);
        } else {
            dk.addPeriodicTo(stream, image, dense, keys, img * c, img * c);
        }
        transformer.forward(stream, workspace, sets, nq, null);

        // upscaling with the high-resolution features
        DeviceBuffer pp1 = wide.slice(0, img * c * 2, "upscale 1 rows");
        gemm.run(stream, keys, up1W, up1B, null, pp1, (int) img, 4 * co1, c, false);
        DeviceBuffer up1 = keysPe.slice(0, 4 * img * co1 * 2, "upscaled 1");
        dk.upscaleLnGelu(stream, pp1, upNormG, upNormB, up1, sets, f, f, co1, LN2D_EPS, s1, frameOfSet);
        DeviceBuffer pp2 = wide.slice(0, 4 * img * co2 * 4 * 2, "upscale 2 rows");
        gemm.run(stream, up1, up2W, up2B, null, pp2, (int) (4 * img), 4 * co2, co1, false);

        // heads: hypernetworks of the 4 mask tokens (rows 2..5), mask logits, IoU (row 1), object score (row 0)
        int ld = nq * c;
        for (int k = 0; k < MASK_TOKENS; k++) {
            DeviceBuffer x = queries.slice((long) (2 + k) * c * 4, ((long) rows - 2 - k) * c * 4, "mask token rows");
            dk.mlp(stream, hyper[k], x, ld, hyperOut.slice((long) k * sets * co2 * 4, (long) sets * co2 * 4,
                    "hyper " + k), sets, hA, hB);
        }
        dk.maskLogits(stream, pp2, hyperOut, masks, sets, f, co2, MASK_TOKENS, 0, MASK_TOKENS, s0, frameOfSet);
        dk.mlp(stream, iouHead, queries.slice((long) c * 4, ((long) rows - 1) * c * 4, "iou token rows"), ld, iouRaw,
                sets, hA, hB);
        dk.mlp(stream, scoreHead, queries, ld, scores, sets, hA, hB);

        // the choice, the pointer, the gating
        dk.sam2Select(stream, masks, iouRaw, queries, sets, nq, c, l * l, multimask, STABILITY_DELTA, STABILITY_THRESH,
                chosen, ious, ptrTokens);
        dk.mlp(stream, objPtrProj, ptrTokens, c, ptrMlp, sets, hA, hB);
        dk.sam2Finalize(stream, masks, chosen, scores, ptrMlp, noObjPtr, lowRes, pointers, sets, l * l, c,
                Sam2Model.NO_OBJECT_SCORE);
    }

    /** fp32 {@code [sets, L, L]}, L = {@code config.lowResSize()}: the chosen mask, -1024 where absent. */
    public DeviceBuffer lowRes() {
        return lowRes;
    }

    /** fp32 {@code [sets]}: the object score logits (> 0: present). */
    public DeviceBuffer objectScores() {
        return scores;
    }

    /** fp32 {@code [sets]}: the chosen mask's predicted IoU. */
    public DeviceBuffer ious() {
        return ious;
    }

    /** bf16 {@code [sets, hidden]}: the object pointer, as the memory bank stores it. */
    public DeviceBuffer pointers() {
        return pointers;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the CUDA SAM 2 mask decoder is closed");
        }
    }

    /** Releases the prompt staging (pinned memory, an event); the device memory belongs to the caller's pool. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            try {
                promptCopied.synchronize();
            } finally {
                promptCopied.close();
                promptStaging.close();
            }
        }
    }
}
