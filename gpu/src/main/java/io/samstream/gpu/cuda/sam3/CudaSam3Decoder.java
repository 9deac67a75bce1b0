package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.DeviceWeights.Bf16;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.cuda.kernels.DetrKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.cuda.kernels.NormKernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.cuda.kernels.Sam2Kernels.Rows;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Prompt;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3Decoder;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * SAM 3's DETR decoder on the GPU, read the way the CPU reference ({@code sam3.DetrDecoder}, {@code DecoderLayer},
 * {@code BoxRelativeBias}) reads, over the presence token and the queries (bf16 rows, fp32 accumulation) with the
 * boxes kept in fp32 on the device from layer to layer. Each layer:
 * <ol>
 *   <li>the queries' positions: {@code ref_point_head} of the boxes' sine encoding (two GEMMs, ReLU between); the
 *       box relative bias's two axis MLPs on the boxes' squashed distances to the map's rows and columns (GEMMs;
 *       their 2-wide input and {@code heads}-wide output padded with zero weights to 8);</li>
 *   <li>self-attention (positions on queries and keys, SDPA), post-norm; cross-attention to the prompt's valid rows
 *       (the padding dropped, as the fusion encoder drops it), post-norm; cross-attention to the encoder's memory
 *       (its position on the keys) with the box bias added to each score ({@link DetrKernels#rpbAttention}: fp32
 *       online softmax, the bias computed from the axis MLPs' outputs, zero for the presence token), post-norm; the
 *       ReLU feed-forward, post-norm;</li>
 *   <li>the boxes refined: {@code bbox_embed} of the normalized queries (two GEMMs, the 4-wide last layer in fp32)
 *       and {@code sigmoid(delta + inverse_sigmoid(boxes))}.</li>
 * </ol>
 * After the last layer the presence token goes through its norm and head (the 1-wide last layer in fp32). Weights
 * and the activations of up to {@code maxPrompt} valid prompt tokens come from the pool; a pass allocates nothing.
 * Not thread-safe.
 */
public final class CudaSam3Decoder implements Sam3Decoder {
    private static final float EPS = (float) Sam3Config.NORM_EPS;
    private static final int WIDE = DetrKernels.DELTA_COLUMNS;

    /** One layer's weights: the packed in_proj blocks each product needs, out_proj, the norms, the feed-forward. */
    private record Layer(Bf16 selfQk, Bf16 selfV, Bf16 selfOut, Bf16 norm2, Bf16 textQ, Bf16 textKv, Bf16 textOut,
                         Bf16 textNorm, Bf16 crossQ, Bf16 crossK, Bf16 crossV, Bf16 crossOut, Bf16 norm1,
                         Bf16 linear1, Bf16 linear2, Bf16 norm3) {}

    /** A narrow fp32 linear ({@link DetrKernels#smallLinear}). */
    private record Small(DeviceBuffer w, DeviceBuffer b, int in, int out) {}

    private final CudaStream stream;
    private final PinnedBuffer staging;
    private final GemmKernels gemm;
    private final NormKernels norm;
    private final Sam2Kernels ops;
    private final DetrKernels detr;
    private final int d, heads, hd, ffn, n, rows, grid, tokens, maxPrompt, biasColumns;
    private final Layer[] layers;
    private final Bf16 outNorm, presenceNorm, bbox0, bbox1, refPoint0, refPoint1, presence0, presence1, biasY0, biasY1,
            biasX0, biasX1;
    private final Small bbox2, presence2;
    /** The presence token then the query embeddings, and sigmoid(reference_points): each pass's start. */
    private final float[] startRows, startBoxes;
    // activations
    private final DeviceBuffer x, pos, tmp, q, qk, v, attn, memory, memoryPos, keys, k, val, prompt, kv, hidden, sine,
            refHidden, dy, dx, hy, hx, ey, ex, normed, bboxA, bboxB, delta, boxes, presenceIn, presenceA, presenceB,
            presenceLogit, startX, startBox;
    /** The position array whose values {@code memoryPos} holds (null: none, or an upload that did not finish). */
    private float[] uploadedPos;

    /**
     * Uploads the decoder's weights (bf16; the narrow last layers fp32) and allocates its activations from
     * {@code pool}, for a memory on a {@code grid x grid} map and up to {@code maxPrompt} valid prompt tokens.
     *
     * @throws IllegalArgumentException when the kernels cannot run these shapes ({@link #checkSupported})
     */
    public CudaSam3Decoder(StateDict sd, Sam3Config.Detector c, int grid, int maxPrompt, CudaKernels kernels,
                           CudaStream stream, DeviceMemoryPool pool, PinnedBuffer staging) {
        checkSupported(c, grid, maxPrompt);
        this.stream = stream;
        this.staging = staging;
        this.gemm = GemmKernels.of(kernels);
        this.norm = NormKernels.of(kernels);
        this.ops = Sam2Kernels.of(kernels);
        this.detr = DetrKernels.of(kernels);
        this.d = c.dModel();
        this.heads = c.heads();
        this.hd = d / heads;
        this.ffn = c.decoderFfn();
        this.n = c.queries();
        this.rows = n + 1;
        this.grid = grid;
        this.tokens = grid * grid;
        this.maxPrompt = maxPrompt;
        this.biasColumns = CudaSam3Vit.roundUp8(heads);

        DeviceWeights up = new DeviceWeights(pool, stream, staging);
        String p = PREFIX;
        layers = new Layer[c.decoderLayers()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = layer(up, sd, p + "layers." + i + ".");
        }
        outNorm = up.normBf16(sd, p + "norm", d);
        presenceNorm = up.normBf16(sd, p + "presence_token_out_norm", d);
        bbox0 = up.linearBf16(sd, p + "bbox_embed.layers.0", d, d);
        bbox1 = up.linearBf16(sd, p + "bbox_embed.layers.1", d, d);
        bbox2 = small(up, sd, p + "bbox_embed.layers.2", d, 4);
        refPoint0 = up.linearBf16(sd, p + "ref_point_head.layers.0", 2 * d, d);
        refPoint1 = up.linearBf16(sd, p + "ref_point_head.layers.1", d, d);
        presence0 = up.linearBf16(sd, p + "presence_token_head.layers.0", d, d);
        presence1 = up.linearBf16(sd, p + "presence_token_head.layers.1", d, d);
        presence2 = small(up, sd, p + "presence_token_head.layers.2", d, 1);
        biasY0 = padded(up, sd, p + "boxRPB_embed_y.layers.0", 2, WIDE, d, d);
        biasY1 = padded(up, sd, p + "boxRPB_embed_y.layers.1", d, d, heads, biasColumns);
        biasX0 = padded(up, sd, p + "boxRPB_embed_x.layers.0", 2, WIDE, d, d);
        biasX1 = padded(up, sd, p + "boxRPB_embed_x.layers.1", d, d, heads, biasColumns);
        startRows = new float[rows * d];
        System.arraycopy(sd.get(p + "presence_token.weight", 1, d).data(), 0, startRows, 0, d);
        System.arraycopy(sd.get(p + "query_embed.weight", n, d).data(), 0, startRows, d, n * d);
        float[] reference = sd.get(p + "reference_points.weight", n, 4).data();
        startBoxes = new float[n * 4];
        for (int i = 0; i < startBoxes.length; i++) {
            startBoxes[i] = (float) (1.0 / (1.0 + Math.exp(-reference[i])));
        }

        long r = rows, t = tokens, m = maxPrompt, ng = (long) n * grid;
        x = pool.allocateBf16(r * d, "sam3 decoder x");
        pos = pool.allocateBf16(r * d, "sam3 decoder query position");
        StagedCopy.uploadBf16(stream, staging, new float[rows * d], pos); // the presence token's row stays zero
        tmp = pool.allocateBf16(r * d, "sam3 decoder x + position");
        q = pool.allocateBf16(r * d, "sam3 decoder q");
        qk = pool.allocateBf16(r * 2 * d, "sam3 decoder self q+k");
        v = pool.allocateBf16(r * d, "sam3 decoder self v");
        attn = pool.allocateBf16(r * d, "sam3 decoder attention output");
        memory = pool.allocateBf16(t * d, "sam3 decoder memory");
        memoryPos = pool.allocateBf16(t * d, "sam3 decoder memory position");
        keys = pool.allocateBf16(t * d, "sam3 decoder memory + position");
        k = pool.allocateBf16(t * d, "sam3 decoder memory k");
        val = pool.allocateBf16(t * d, "sam3 decoder memory v");
        prompt = pool.allocateBf16(m * d, "sam3 decoder prompt (valid rows)");
        kv = pool.allocateBf16(m * 2 * d, "sam3 decoder prompt k+v");
        hidden = pool.allocateBf16(r * ffn, "sam3 decoder ffn hidden");
        sine = pool.allocateBf16((long) n * 2 * d, "sam3 decoder box sine");
        refHidden = pool.allocateBf16((long) n * d, "sam3 decoder ref_point_head hidden");
        dy = pool.allocateBf16(ng * WIDE, "sam3 decoder box row distances");
        dx = pool.allocateBf16(ng * WIDE, "sam3 decoder box column distances");
        hy = pool.allocateBf16(ng * d, "sam3 decoder row bias hidden");
        hx = pool.allocateBf16(ng * d, "sam3 decoder column bias hidden");
        ey = pool.allocateBf16(ng * biasColumns, "sam3 decoder row bias");
        ex = pool.allocateBf16(ng * biasColumns, "sam3 decoder column bias");
        normed = pool.allocateBf16((long) n * d, "sam3 decoder normalized queries");
        bboxA = pool.allocateBf16((long) n * d, "sam3 decoder bbox hidden");
        bboxB = pool.allocateBf16((long) n * d, "sam3 decoder bbox hidden 2");
        delta = pool.allocate((long) n * 16, "sam3 decoder box delta (fp32)");
        boxes = pool.allocate((long) n * 16, "sam3 decoder boxes (fp32)");
        presenceIn = pool.allocateBf16(d, "sam3 decoder presence normalized");
        presenceA = pool.allocateBf16(d, "sam3 decoder presence hidden");
        presenceB = pool.allocateBf16(d, "sam3 decoder presence hidden 2");
        presenceLogit = pool.allocate(4, "sam3 decoder presence logit (fp32)");
        startX = pool.allocateBf16(r * d, "sam3 decoder start rows");
        startBox = pool.allocate((long) n * 16, "sam3 decoder start boxes (fp32)");
        StagedCopy.uploadBf16(stream, staging, startRows, startX);
        StagedCopy.uploadF32(stream, staging, startBoxes, startBox);
    }

    /**
     * The decoder of one memory and prompt: the memory, its position and the prompt's valid rows uploaded as bf16,
     * one pass, the normalized queries, boxes and presence logit brought back. Synchronous.
     */
    @Override
    public Output forward(FeatureMap memoryRows, float[] position, int mapGrid, Prompt p) {
        int m = stage(memoryRows, position, mapGrid, p);
        StagedCopy.uploadBf16(stream, staging, memoryRows.values(), memory);
        forward(m);
        return output();
    }

    /**
     * Checks a pass's inputs, uploads the position (unless it is the very array uploaded last: the seam's arrays are
     * never written by their readers) and the prompt's valid rows, and sets the start rows and boxes; the memory is
     * the caller's. Returns the valid prompt tokens, {@link #forward(DeviceBuffer, int)}'s second argument.
     */
    public int stage(FeatureMap memoryRows, float[] position, int mapGrid, Prompt p) {
        if (mapGrid != grid || memoryRows.length() != (long) tokens * d || position.length != (long) tokens * d) {
            throw new IllegalArgumentException("decoder: a memory of " + memoryRows.length() + " and a position of "
                    + position.length + " values on a " + mapGrid + " grid; " + (long) tokens * d + " each on a "
                    + grid + " grid expected");
        }
        float[] valid = CudaSam3FusionEncoder.validRows(p, d);
        int m = valid.length / d;
        if (m < 1 || m > maxPrompt) {
            throw new IllegalArgumentException("decoder: a prompt of " + m + " valid tokens (1 to " + maxPrompt + ")");
        }
        if (position != uploadedPos) {
            uploadedPos = null;
            StagedCopy.uploadBf16(stream, staging, position, memoryPos);
            uploadedPos = position;
        }
        StagedCopy.uploadBf16(stream, staging, valid, prompt);
        stream.copy(startX, x, (long) rows * d * 2);
        stream.copy(startBox, boxes, (long) n * 16);
        return m;
    }

    /** The bf16 memory {@code [grid², d]} {@link #forward(int)} reads (a caller's upload goes here). */
    public DeviceBuffer memoryInput() {
        return memory;
    }

    /** A pass's normalized queries, boxes and presence logit, brought back in one trip. Synchronous. */
    public Output output() {
        long q = (long) n * d * 2, b = (long) n * 16;
        stream.download(normed, 0, staging, 0, q);
        stream.download(boxes, 0, staging, q, b);
        stream.download(presenceLogit, 0, staging, q + b, 4);
        stream.synchronize();
        float[] queries = staging.getBf16(0, n * d);
        FloatBuffer f = staging.buffer().position((int) q).slice().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
        float[] out = new float[4 * n];
        f.get(out);
        return new Output(queries, out, f.get());
    }

    /**
     * Queues one pass from the uploaded memory, position, the first {@code promptTokens} prompt rows, and the start
     * rows and boxes, to the normalized queries, the boxes and the presence logit.
     */
    public void forward(int promptTokens) {
        forward(memory, promptTokens);
    }

    /** {@link #forward(int)} reading the memory {@code [grid², d]} (bf16) from {@code memory}, unchanged. */
    public void forward(DeviceBuffer memory, int promptTokens) {
        long rd = (long) rows * d;
        ops.add(stream, memory, memoryPos, keys, (long) tokens * d);
        DeviceBuffer queryPos = pos.slice((long) d * 2, (long) n * d * 2, "sam3 decoder queries' position");
        DeviceBuffer queries = x.slice((long) d * 2, (long) n * d * 2, "sam3 decoder queries");
        float scale = (float) (1.0 / Math.sqrt(hd));
        for (Layer l : layers) {
            // the queries' positions and the box bias from the current boxes
            detr.boxSine(stream, boxes, sine, n, d);
            gemm.run(stream, sine, refPoint0.w(), refPoint0.b(), null, refHidden, n, d, 2 * d, false);
            ops.relu(stream, refHidden, (long) n * d);
            gemm.run(stream, refHidden, refPoint1.w(), refPoint1.b(), null, queryPos, n, d, d, false);
            detr.boxDeltas(stream, boxes, dy, dx, n, grid, grid);
            axisBias(dy, biasY0, biasY1, hy, ey);
            axisBias(dx, biasX0, biasX1, hx, ex);
            // self-attention: q, k of x + pos, v of x
            ops.add(stream, x, pos, tmp, rd);
            gemm.run(stream, tmp, l.selfQk.w(), l.selfQk.b(), null, qk, rows, 2 * d, d, false);
            gemm.run(stream, x, l.selfV.w(), l.selfV.b(), null, v, rows, d, d, false);
            DeviceBuffer selfK = qk.slice((long) d * 2, qk.bytes() - (long) d * 2, "sam3 decoder self k");
            ops.sdpa(stream, new Rows(qk, 2 * d, rd * 2), new Rows(selfK, 2 * d, rd * 2), new Rows(v, d, rd),
                    new Rows(attn, d, rd), 1, rows, rows, heads, hd, scale);
            residualThenNorm(attn, l.selfOut, l.norm2);
            // cross-attention to the prompt's valid rows
            ops.add(stream, x, pos, tmp, rd);
            gemm.run(stream, tmp, l.textQ.w(), l.textQ.b(), null, q, rows, d, d, false);
            gemm.run(stream, prompt, l.textKv.w(), l.textKv.b(), null, kv, promptTokens, 2 * d, d, false);
            DeviceBuffer pv = kv.slice((long) d * 2, kv.bytes() - (long) d * 2, "sam3 decoder prompt v");
            long mkv = (long) promptTokens * 2 * d;
            ops.sdpa(stream, new Rows(q, d, rd), new Rows(kv, 2 * d, mkv), new Rows(pv, 2 * d, mkv),
                    new Rows(attn, d, rd), 1, rows, promptTokens, heads, hd, scale);
            residualThenNorm(attn, l.textOut, l.textNorm);
            // cross-attention to the memory with the box bias
            ops.add(stream, x, pos, tmp, rd);
            gemm.run(stream, tmp, l.crossQ.w(), l.crossQ.b(), null, q, rows, d, d, false);
            gemm.run(stream, keys, l.crossK.w(), l.crossK.b(), null, k, tokens, d, d, false);
            gemm.run(stream, memory, l.crossV.w(), l.crossV.b(), null, val, tokens, d, d, false);
            detr.rpbAttention(stream, q, k, val, ey, ex, biasColumns, attn, rows, d, heads, grid, grid, scale);
            residualThenNorm(attn, l.crossOut, l.norm1);
            // feed-forward
            gemm.run(stream, x, l.linear1.w(), l.linear1.b(), null, hidden, rows, ffn, d, false);
            ops.relu(stream, hidden, (long) rows * ffn);
            gemm.run(stream, hidden, l.linear2.w(), l.linear2.b(), x, x, rows, d, ffn, false);
            norm.layerNorm(stream, x, l.norm3.w(), l.norm3.b(), x, rows, d, EPS);
            // the boxes refined from the normalized queries
            norm.layerNorm(stream, queries, outNorm.w(), outNorm.b(), normed, n, d, EPS);
            gemm.run(stream, normed, bbox0.w(), bbox0.b(), null, bboxA, n, d, d, false);
            ops.relu(stream, bboxA, (long) n * d);
            gemm.run(stream, bboxA, bbox1.w(), bbox1.b(), null, bboxB, n, d, d, false);
            ops.relu(stream, bboxB, (long) n * d);
            detr.smallLinear(stream, bboxB, bbox2.w, bbox2.b, delta, n, d, 4);
            detr.boxUpdate(stream, boxes, delta, n);
        }
        DeviceBuffer presenceToken = x.slice(0, (long) d * 2, "sam3 decoder presence token");
        norm.layerNorm(stream, presenceToken, presenceNorm.w(), presenceNorm.b(), presenceIn, 1, d, EPS);
        gemm.run(stream, presenceIn, presence0.w(), presence0.b(), null, presenceA, 1, d, d, false);
        ops.relu(stream, presenceA, d);
        gemm.run(stream, presenceA, presence1.w(), presence1.b(), null, presenceB, 1, d, d, false);
        ops.relu(stream, presenceB, d);
        detr.smallLinear(stream, presenceB, presence2.w, presence2.b, presenceLogit, 1, d, 1);
    }

    /** {@code x = norm(x + out_proj(attention))}: the post-norm step of each attention. */
    private void residualThenNorm(DeviceBuffer attention, Bf16 outProj, Bf16 postNorm) {
        gemm.run(stream, attention, outProj.w(), outProj.b(), x, x, rows, d, d, false);
        norm.layerNorm(stream, x, postNorm.w(), postNorm.b(), x, rows, d, EPS);
    }

    /** One axis of the box bias: {@code out = layer1(ReLU(layer0(distances)))} over the n x grid rows. */
    private void axisBias(DeviceBuffer distances, Bf16 layer0, Bf16 layer1, DeviceBuffer hiddenRows, DeviceBuffer out) {
        int m = n * grid;
        gemm.run(stream, distances, layer0.w(), layer0.b(), null, hiddenRows, m, d, WIDE, false);
        ops.relu(stream, hiddenRows, (long) m * d);
        gemm.run(stream, hiddenRows, layer1.w(), layer1.b(), null, out, m, biasColumns, d, false);
    }

    /** The pool owns the device memory; nothing to free here. */
    @Override
    public void close() {}

    private Layer layer(DeviceWeights up, StateDict sd, String p) {
        float[][] self = inProj(sd, p + "self_attn"), text = inProj(sd, p + "ca_text"),
                cross = inProj(sd, p + "cross_attn");
        return new Layer(
                InProjection.rows(up, self[0], self[1], d, 0, 2, p + "self_attn.in_proj (q, k)"),
                InProjection.rows(up, self[0], self[1], d, 2, 3, p + "self_attn.in_proj (v)"),
                up.linearBf16(sd, p + "self_attn.out_proj", d, d), up.normBf16(sd, p + "norm2", d),
                InProjection.rows(up, text[0], text[1], d, 0, 1, p + "ca_text.in_proj (q)"),
                InProjection.rows(up, text[0], text[1], d, 1, 3, p + "ca_text.in_proj (k, v)"),
                up.linearBf16(sd, p + "ca_text.out_proj", d, d), up.normBf16(sd, p + "catext_norm", d),
                InProjection.rows(up, cross[0], cross[1], d, 0, 1, p + "cross_attn.in_proj (q)"),
                InProjection.rows(up, cross[0], cross[1], d, 1, 2, p + "cross_attn.in_proj (k)"),
                InProjection.rows(up, cross[0], cross[1], d, 2, 3, p + "cross_attn.in_proj (v)"),
                up.linearBf16(sd, p + "cross_attn.out_proj", d, d), up.normBf16(sd, p + "norm1", d),
                up.linearBf16(sd, p + "linear1", d, ffn), up.linearBf16(sd, p + "linear2", ffn, d),
                up.normBf16(sd, p + "norm3", d));
    }

    private float[][] inProj(StateDict sd, String p) {
        return new float[][] {sd.get(p + ".in_proj_weight", 3 * d, d).data(), sd.get(p + ".in_proj_bias", 3 * d).data()};
    }

    private static Small small(DeviceWeights up, StateDict sd, String name, int in, int out) {
        return new Small(up.f32(sd.get(name + ".weight", out, in).data(), name + ".weight"),
                up.f32(sd.get(name + ".bias", out).data(), name + ".bias"), in, out);
    }

    /** A Linear {@code [out, in]} zero-padded to {@code [outPad, inPad]} (its bias to outPad), bf16. */
    private static Bf16 padded(DeviceWeights up, StateDict sd, String name, int in, int inPad, int out, int outPad) {
        float[] w = CudaSam3Vit.padRows(CudaSam3Vit.padColumns(sd.get(name + ".weight", out, in).data(), out, in,
                inPad), out, inPad, outPad);
        float[] bias = Arrays.copyOf(sd.get(name + ".bias", out).data(), outPad);
        return new Bf16(up.bf16(w, name + ".weight (padded)"), up.bf16(bias, name + ".bias (padded)"));
    }

    /** Why the kernels cannot run this decoder, as an exception naming what; nothing when they can. */
    public static void checkSupported(Sam3Config.Detector c, int grid, int maxPrompt) {
        List<String> problems = new ArrayList<>();
        int d = c.dModel();
        if (d % 8 != 0 || d > 2048) {
            problems.add("width " + d + " (a multiple of 8 up to 2048)");
        }
        int hd = d / Math.max(1, c.heads());
        if (c.heads() < 1 || d % c.heads() != 0 || hd % 8 != 0 || Sam2Kernels.sdpaCeiling(hd) < 0
                || hd > DetrKernels.MAX_HEAD_DIM) {
            problems.add("head width " + d + "/" + c.heads() + " (a multiple of 8 up to " + DetrKernels.MAX_HEAD_DIM
                    + ")");
        }
        if (c.decoderFfn() % 8 != 0 || c.decoderFfn() < 8) {
            problems.add("feed-forward " + c.decoderFfn() + " (a multiple of 8)");
        }
        if (c.queries() < 1 || c.queries() + 1 > 65535 || c.decoderLayers() < 1) {
            problems.add(c.queries() + " queries and " + c.decoderLayers() + " layers");
        }
        if (grid < 1 || maxPrompt < 1) {
            problems.add("a " + grid + " grid and " + maxPrompt + " prompt tokens (at least 1 each)");
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the CUDA SAM 3 decoder cannot run " + c + ": "
                    + String.join("; ", problems));
        }
    }

    /**
     * The pool this decoder takes: every weight in bf16 (the two narrow last layers in fp32), each tensor 256-byte
     * aligned, plus the activations. No spare: the owner adds it.
     */
    public static long poolBytes(Sam3Config.Detector c, int grid, int maxPrompt) {
        long d = c.dModel(), ffn = c.decoderFfn(), n = c.queries(), r = n + 1, t = (long) grid * grid;
        long m = maxPrompt, hp = CudaSam3Vit.roundUp8(c.heads()), ng = n * grid, w = WIDE;
        long perLayer = 0;
        long[] bf16Tensors = {
                2 * d * d, 2 * d, d * d, d, d * d, d, d, d,              // self: q+k, v, out_proj; norm2
                d * d, d, 2 * d * d, 2 * d, d * d, d, d, d,              // text: q, k+v, out_proj; catext_norm
                d * d, d, d * d, d, d * d, d, d * d, d, d, d,            // memory: q, k, v, out_proj; norm1
                ffn * d, ffn, d * ffn, d, d, d};                         // linear1, linear2; norm3
        for (long v : bf16Tensors) {
            perLayer += align(v * 2);
        }
        long shared = 0;
        long[] sharedBf16 = {
                d, d, d, d,                                              // norm, presence_token_out_norm
                d * d, d, d * d, d,                                      // bbox_embed 0, 1
                d * 2 * d, d, d * d, d,                                  // ref_point_head
                d * d, d, d * d, d,                                      // presence_token_head 0, 1
                d * w, d, hp * d, hp, d * w, d, hp * d, hp};             // boxRPB_embed_y, _x (padded)
        for (long v : sharedBf16) {
            shared += align(v * 2);
        }
        shared += align(4 * d * 4) + align(4 * 4) + align(d * 4) + align(4);   // bbox_embed's and presence's last
        long[] activations = {r * d, r * d, r * d, r * d, r * 2 * d, r * d, r * d, t * d, t * d, t * d, t * d, t * d,
                m * d, m * 2 * d, r * ffn, n * 2 * d, n * d, ng * w, ng * w, ng * d, ng * d, ng * hp, ng * hp, n * d,
                n * d, n * d, d, d, d};
        long act = 0;
        for (long v : activations) {
            act += align(v * 2);
        }
        act += 2 * align(n * 16) + align(4);                                     // delta, boxes, presence logit
        act += align(r * d * 2) + align(n * 16);                                 // the start rows and boxes
        return c.decoderLayers() * perLayer + shared + act;
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }
}
