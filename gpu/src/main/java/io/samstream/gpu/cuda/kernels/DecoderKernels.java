package io.samstream.gpu.cuda.kernels;

import java.util.Locale;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceWeights;

/**
 * Typed launches of the prompt encoder's and mask decoder's kernels ({@code decoder_ops.cuh}), with the
 * sizes of every buffer checked before anything is queued, like {@link CudaKernels} (whose module holds
 * them). fp32 buffers are token-side activations and fp32 weights; bf16 buffers are image-side.
 */
public final class DecoderKernels {
    static final String PROMPT_TOKENS = "samstream_dec_prompt_tokens", DENSE_PE = "samstream_dec_dense_pe",
            EMBED_KEYS = "samstream_dec_embed_keys", MASK_KEYS = "samstream_dec_mask_keys",
            ADD_PERIODIC_TO = "samstream_dec_add_periodic_to_bf16", ADD_F32 = "samstream_dec_add_f32",
            LINEAR = "samstream_dec_linear_f32", LAYERNORM = "samstream_dec_layernorm_f32",
            UPSCALE = "samstream_dec_upscale_ln_gelu", MASK_LOGITS = "samstream_dec_mask_logits",
            SAM2_SELECT = "samstream_sam2_dec_select", SAM2_FINALIZE = "samstream_sam2_dec_finalize";
    /** The kernels besides the attention variants, looked up when a decoder is made. */
    static final String[] NAMES = {PROMPT_TOKENS, DENSE_PE, EMBED_KEYS, MASK_KEYS, ADD_PERIODIC_TO, ADD_F32, LINEAR,
            LAYERNORM, UPSCALE, MASK_LOGITS, SAM2_SELECT, SAM2_FINALIZE};
    /** Head-dim bounds the attention kernels are compiled for (register arrays). */
    public static final int[] ATTN_HD = {16, 32, 64};
    /** Channel limits of the upscaler kernels (registers): first ConvTranspose output, second. */
    public static final int MAX_UPSCALE1 = 256, MAX_UPSCALE2 = 64;
    /** Hidden channels of the mask downscaler the kernel holds in registers. */
    public static final int MAX_MASK_IN_CHANS = 64;
    private static final int THREADS = 256;
    /** Rows per warp of the token-side Linear (decoder_ops::LR). */
    private static final int LINEAR_ROWS = 8;

    /** The three attention flavours: q, k / v and output types. */
    public enum Attn {
        /** tokens to image: fp32 queries, bf16 image keys / values, fp32 out; 8 warps per query, splitting the keys. */
        TOKEN_TO_IMAGE("warp", "fhf"),
        /** token self attention: all fp32; one thread per query. */
        SELF("thread", "fff"),
        /** image to tokens: bf16 image queries, fp32 token keys / values, bf16 out; one thread per query. */
        IMAGE_TO_TOKEN("thread", "hfh");

        final String kind, suffix;

        Attn(String kind, String suffix) {
            this.kind = kind;
            this.suffix = suffix;
        }

        String symbol(int hdBound) {
            return "samstream_dec_attn_" + kind + "_hd" + hdBound + "_" + suffix;
        }

        /** The vector-load variant for a head dim of exactly {@code hd} (one of {@link #ATTN_HD}). */
        String vecSymbol(int hd) {
            return "samstream_dec_attn_vec_" + kind + "_hd" + hd + "_" + suffix;
        }

        int bytesQ() {
            return suffix.charAt(0) == 'f' ? 4 : 2;
        }

        int bytesKv() {
            return suffix.charAt(1) == 'f' ? 4 : 2;
        }

        int bytesO() {
            return suffix.charAt(2) == 'f' ? 4 : 2;
        }
    }

    private final CudaKernels k;
    private final int multiprocessors;

    public DecoderKernels(CudaKernels kernels) {
        this.k = kernels;
        this.multiprocessors = kernels.context().info().multiprocessors();
        for (String name : NAMES) {
            kernels.addKernel(name);
        }
        for (Attn a : Attn.values()) {
            for (int hd : ATTN_HD) {
                kernels.addKernel(a.symbol(hd));
                kernels.addKernel(a.vecSymbol(hd));
            }
        }
    }

    /** Smallest compiled head-dim bound that holds {@code hd}, or -1. */
    public static int hdBound(int hd) {
        for (int b : ATTN_HD) {
            if (hd <= b) {
                return b;
            }
        }
        return -1;
    }

    public void promptTokens(CudaStream s, DeviceBuffer coords, DeviceBuffer codes, DeviceBuffer outTokens, DeviceBuffer gauss,
                      DeviceBuffer pointEmbed, DeviceBuffer notAPoint, DeviceBuffer tokens, int sets, int maskTokens,
                      int sparse, int c) {
        String op = f("promptTokens sets=%d mask_tokens=%d sparse=%d c=%d", sets, maskTokens, sparse, c);
        int nq = 1 + maskTokens + sparse;
        need(coords, (long) sets * sparse * 2 * 4, op, "coords");
        need(codes, (long) sets * sparse * 4, op, "codes");
        need(outTokens, (long) (1 + maskTokens) * c * 4, op, "outTokens");
        need(gauss, (long) c * 4, op, "gauss");
        need(pointEmbed, 4L * c * 4, op, "pointEmbed");
        need(notAPoint, (long) c * 4, op, "notAPoint");
        need(tokens, (long) sets * nq * c * 4, op, "tokens");
        grid(PROMPT_TOKENS, (long) sets * nq * c, s, op, ptr(coords), ptr(codes), ptr(outTokens), ptr(gauss),
                ptr(pointEmbed), ptr(notAPoint), ptr(tokens), i(sets), i(maskTokens), i(sparse), i(c));
    }

    public void densePe(CudaStream s, DeviceBuffer gauss, DeviceBuffer pe, int e, int c) {
        String op = f("densePe e=%d c=%d", e, c);
        need(gauss, (long) c * 4, op, "gauss");
        need(pe, (long) e * e * c * 2, op, "pe");
        grid(DENSE_PE, (long) e * e * c, s, op, ptr(gauss), ptr(pe), i(e), i(c));
    }

    public void embedKeys(CudaStream s, DeviceBuffer emb, DeviceBuffer noMask, DeviceBuffer keys, int sets, int t, int c) {
        String op = f("embedKeys sets=%d t=%d c=%d", sets, t, c);
        need(emb, (long) c * t * 4, op, "emb");
        need(noMask, (long) c * 4, op, "noMask");
        need(keys, (long) sets * t * c * 2, op, "keys");
        require(sets <= 65535, op + ": at most 65535 sets");
        k.launchKernel(EMBED_KEYS, (t + 31) / 32, (c + 31) / 32, sets, 32, 8, s,
                Pointer.to(ptr(emb), ptr(noMask), ptr(keys), i(t), i(c)), op);
    }

    /** The weights of the mask downscaler, fp32. */
    public record MaskDownscaler(DeviceBuffer w1, DeviceBuffer b1, DeviceBuffer g1, DeviceBuffer be1, DeviceBuffer w2,
                          DeviceBuffer b2, DeviceBuffer g2, DeviceBuffer be2, DeviceBuffer w3, DeviceBuffer b3) {}

    public void maskKeys(CudaStream s, DeviceBuffer emb, DeviceBuffer masks, DeviceBuffer maskSlot, MaskDownscaler w,
                  DeviceBuffer keys, int sets, int e, int c, int maskInChans, float eps) {
        String op = f("maskKeys sets=%d e=%d c=%d mask_in_chans=%d", sets, e, c, maskInChans);
        require(maskInChans % 4 == 0 && maskInChans <= MAX_MASK_IN_CHANS,
                op + ": mask_in_chans must be a multiple of 4 up to " + MAX_MASK_IN_CHANS);
        int t = e * e;
        need(emb, (long) c * t * 4, op, "emb");
        need(maskSlot, (long) sets * 4, op, "maskSlot");
        need(keys, (long) sets * t * c * 2, op, "keys");
        need(w.w1(), (long) maskInChans * 4, op, "w1");
        need(w.w2(), (long) maskInChans * maskInChans * 4, op, "w2");
        need(w.w3(), (long) c * maskInChans * 4, op, "w3");
        grid(MASK_KEYS, (long) sets * t, s, op, ptr(emb), ptr(masks), ptr(maskSlot), ptr(w.w1()), ptr(w.b1()),
                ptr(w.g1()), ptr(w.be1()), ptr(w.w2()), ptr(w.b2()), ptr(w.g2()), ptr(w.be2()), ptr(w.w3()),
                ptr(w.b3()), ptr(keys), i(sets), i(e), i(c), i(maskInChans), Pointer.to(new float[] {eps}));
    }

    /** {@code y[i] = x[i] + add[i % period]}, bf16. */
    public void addPeriodicTo(CudaStream s, DeviceBuffer x, DeviceBuffer add, DeviceBuffer y, long total, long period) {
        String op = f("addPeriodicTo total=%d period=%d", total, period);
        require(total % 8 == 0 && period % 8 == 0, op + ": sizes must be multiples of 8");
        need16(x, total * 2, op, "x");
        need16(add, period * 2, op, "add");
        need16(y, total * 2, op, "y");
        grid(ADD_PERIODIC_TO, total / 8, s, op, ptr(x), ptr(add), ptr(y), Pointer.to(new long[] {total}),
                Pointer.to(new long[] {period}));
    }

    public void addF32(CudaStream s, DeviceBuffer a, DeviceBuffer b, DeviceBuffer y, long n) {
        String op = f("addF32 n=%d", n);
        need(a, n * 4, op, "a");
        need(b, n * 4, op, "b");
        need(y, n * 4, op, "y");
        grid(ADD_F32, n, s, op, ptr(a), ptr(b), ptr(y), Pointer.to(new long[] {n}));
    }

    /**
     * fp32 {@code y[m, n] = x[m, :]·w[n, :] (+bias) (relu) (+residual)}; rows of x {@code ldx} apart, of y and
     * residual {@code ldy} apart (elements). Residual may be y.
     */
    public void linear(CudaStream s, DeviceBuffer x, int ldx, DeviceBuffer w, DeviceBuffer bias, DeviceBuffer residual,
                DeviceBuffer y, int ldy, int m, int n, int kDim, boolean relu) {
        String op = f("linear m=%d n=%d k=%d", m, n, kDim);
        require(m > 0 && n > 0 && kDim > 0 && ldx >= kDim && ldy >= n, op + ": bad sizes or strides");
        need(x, ((long) (m - 1) * ldx + kDim) * 4, op, "x");
        need(w, (long) n * kDim * 4, op, "w");
        need(y, ((long) (m - 1) * ldy + n) * 4, op, "y");
        if (bias != null) {
            need(bias, (long) n * 4, op, "bias");
        }
        if (residual != null) {
            need(residual, ((long) (m - 1) * ldy + n) * 4, op, "residual");
        }
        // decoder_ops::linear_f32: one warp per output column and LINEAR_ROWS rows, THREADS / 32 warps per CTA.
        long warps = (long) n * ((m + LINEAR_ROWS - 1) / LINEAR_ROWS);
        long ctas = (warps + THREADS / 32 - 1) / (THREADS / 32);
        require(ctas <= Integer.MAX_VALUE, op + ": too many outputs for one launch");
        k.launchKernel(LINEAR, (int) ctas, 1, 1, THREADS, 1, s, Pointer.to(ptr(x), i(ldx), ptr(w), ptr(bias),
                ptr(residual), ptr(y), i(ldy), i(m), i(n), i(kDim), i(relu ? 1 : 0)), op);
    }

    /**
     * An MLP (ReLU between layers, none after the last) over {@code rows} rows of x, {@code ldx} apart, into dst
     * [rows, out]; the hidden layers alternate between {@code a} and {@code b}.
     */
    public void mlp(CudaStream s, DeviceWeights.Dense[] layers, DeviceBuffer x, int ldx, DeviceBuffer dst, int rows,
             DeviceBuffer a, DeviceBuffer b) {
        DeviceBuffer src = x;
        int ld = ldx;
        for (int i = 0; i < layers.length; i++) {
            DeviceWeights.Dense dl = layers[i];
            boolean last = i == layers.length - 1;
            DeviceBuffer to = last ? dst : (i % 2 == 0 ? a : b);
            linear(s, src, ld, dl.w(), dl.b(), null, to, dl.out(), rows, dl.out(), dl.in(), !last);
            src = to;
            ld = dl.out();
        }
    }

    public void layerNorm(CudaStream s, DeviceBuffer x, DeviceBuffer g, DeviceBuffer b, DeviceBuffer y, int rows, int c,
                   float eps) {
        String op = f("layerNormF32 rows=%d c=%d", rows, c);
        need(x, (long) rows * c * 4, op, "x");
        need(y, (long) rows * c * 4, op, "y");
        need(g, (long) c * 4, op, "gamma");
        need(b, (long) c * 4, op, "beta");
        k.launchKernel(LAYERNORM, (rows + 7) / 8, 1, 1, THREADS, 1, s,
                Pointer.to(ptr(x), ptr(g), ptr(b), ptr(y), i(rows), i(c), Pointer.to(new float[] {eps})), op);
    }

    /**
     * Batched multi-head attention, {@code softmax(q·kᵀ / sqrt(hd))·v} per head: set b's queries are rows
     * {@code b*nq..}, its keys and values rows {@code b*nk..}; row strides in elements.
     */
    public void attention(CudaStream s, Attn a, DeviceBuffer q, int ldq, DeviceBuffer kBuf, int ldk, DeviceBuffer v, int ldv,
                   DeviceBuffer o, int ldo, int sets, int nq, int nk, int heads, int hd) {
        String op = f("decoder attention %s sets=%d nq=%d nk=%d heads=%d hd=%d", a, sets, nq, nk, heads, hd);
        int bound = hdBound(hd);
        require(bound > 0, op + ": head dim above " + ATTN_HD[ATTN_HD.length - 1]);
        int width = heads * hd;
        require(ldq >= width && ldk >= width && ldv >= width && ldo >= width, op + ": strides below heads x hd");
        need(q, ((long) sets * nq - 1) * ldq * a.bytesQ() + (long) width * a.bytesQ(), op, "q");
        need(kBuf, ((long) sets * nk - 1) * ldk * a.bytesKv() + (long) width * a.bytesKv(), op, "k");
        need(v, ((long) sets * nk - 1) * ldv * a.bytesKv() + (long) width * a.bytesKv(), op, "v");
        need(o, ((long) sets * nq - 1) * ldo * a.bytesO() + (long) width * a.bytesO(), op, "o");
        long work = (long) sets * heads * nq;
        // Whole-row 16-byte loads when every row start is 16-byte aligned and hd is a compiled width.
        boolean vec = bound == hd && aligned(q, ldq, a.bytesQ(), hd) && aligned(kBuf, ldk, a.bytesKv(), hd)
                && aligned(v, ldv, a.bytesKv(), hd) && aligned(o, ldo, a.bytesO(), hd);
        int gridX;
        if (a.kind.equals("warp")) {
            // decoder_ops::attention_warp: one CTA (8 warps splitting the keys) per (set, head, query)
            require(work <= Integer.MAX_VALUE, op + ": too large");
            gridX = (int) work;
        } else {
            gridX = gridFor(work);
        }
        Pointer divisor = Pointer.to(new float[] {(float) Math.sqrt(hd)});
        if (vec) {
            k.launchKernel(a.vecSymbol(hd), gridX, 1, 1, THREADS, 1, s, Pointer.to(ptr(q), i(ldq), ptr(kBuf), i(ldk),
                    ptr(v), i(ldv), ptr(o), i(ldo), i(sets), i(nq), i(nk), i(heads), divisor), op);
        } else {
            k.launchKernel(a.symbol(bound), gridX, 1, 1, THREADS, 1, s, Pointer.to(ptr(q), i(ldq), ptr(kBuf), i(ldk),
                    ptr(v), i(ldv), ptr(o), i(ldo), i(sets), i(nq), i(nk), i(heads), i(hd), divisor), op);
        }
    }

    /** Rows of {@code ld} elements of {@code bytes} each, head slices of {@code hd}: all 16-byte aligned. */
    private static boolean aligned(DeviceBuffer b, int ld, int bytes, int hd) {
        return b.offset() % 16 == 0 && ((long) ld * bytes) % 16 == 0 && ((long) hd * bytes) % 16 == 0;
    }

    /**
     * ConvTranspose scatter + LayerNorm2d + GELU into {@code y [batch, 2h, 2w, co]}. SAM 2: {@code skip} bf16
     * {@code [frames, 2h, 2w, co]} is added before the LayerNorm, set n reading frame {@code frameOfSet[n]} (device
     * ints; the frames the buffer holds bound them: one outside gives NaN); null for SAM.
     */
    public void upscaleLnGelu(CudaStream s, DeviceBuffer perPixel, DeviceBuffer g, DeviceBuffer b, DeviceBuffer y, int batch,
                       int h, int w, int co, float eps, DeviceBuffer skip, DeviceBuffer frameOfSet) {
        String op = f("upscaleLnGelu batch=%d grid=%dx%d co=%d%s", batch, h, w, co, skip != null ? " +skip" : "");
        require(co <= MAX_UPSCALE1, op + ": at most " + MAX_UPSCALE1 + " channels");
        long pixels = (long) batch * h * w;
        need(perPixel, pixels * co * 4 * 2, op, "perPixel");
        need(y, pixels * 4 * co * 2, op, "y");
        need(g, (long) co * 2, op, "gamma");
        need(b, (long) co * 2, op, "beta");
        int frames = skipFrames(skip, frameOfSet, batch, 4L * h * w * co * 2, op);
        long ctas = (pixels * 4 + 7) / 8;   // one warp per output pixel
        require(ctas <= Integer.MAX_VALUE, op + ": too large");
        k.launchKernel(UPSCALE, (int) ctas, 1, 1, THREADS, 1, s, Pointer.to(ptr(perPixel), ptr(g), ptr(b), ptr(y),
                i(batch), i(h), i(w), i(co), Pointer.to(new float[] {eps}), ptr(skip), ptr(frameOfSet), i(frames)), op);
    }

    /**
     * Mask logits {@code [sets, count, 4e, 4e]} of mask tokens {@code first..}. SAM 2: {@code skip} bf16
     * {@code [frames, 4e, 4e, co]} is added to the features and GELU applied (the GEMM before ran without it), set i
     * reading frame {@code frameOfSet[i]}; null for SAM.
     */
    public void maskLogits(CudaStream s, DeviceBuffer perPixel, DeviceBuffer hyper, DeviceBuffer masks, int sets, int e,
                    int co, int maskTokens, int first, int count, DeviceBuffer skip, DeviceBuffer frameOfSet) {
        String op = f("maskLogits sets=%d e=%d co=%d first=%d count=%d%s", sets, e, co, first, count,
                skip != null ? " +skip" : "");
        require(first >= 0 && count > 0 && first + count <= maskTokens, op + ": masks outside the mask tokens");
        require(co <= MAX_UPSCALE2, op + ": at most " + MAX_UPSCALE2 + " channels");
        long s4 = 4L * e;
        need(perPixel, (long) sets * 4 * e * e * co * 4 * 2, op, "perPixel");
        need(hyper, (long) maskTokens * sets * co * 4, op, "hyper");
        need(masks, (long) sets * count * s4 * s4 * 4, op, "masks");
        int frames = skipFrames(skip, frameOfSet, sets, s4 * s4 * co * 2, op);
        grid(MASK_LOGITS, (long) sets * s4 * s4, s, op, ptr(perPixel), ptr(hyper), ptr(masks), i(sets), i(e),
                i(co), i(maskTokens), i(first), i(count), ptr(skip), ptr(frameOfSet), i(frames));
    }

    /** The whole frames {@code skip} holds (at least one), 0 without one; the frame index of each set is needed. */
    private static int skipFrames(DeviceBuffer skip, DeviceBuffer frameOfSet, int sets, long frameBytes, String op) {
        if (skip == null) {
            require(frameOfSet == null, op + ": frame indices without a skip input");
            return 0;
        }
        need(skip, frameBytes, op, "skip (one frame)");
        need(frameOfSet, (long) sets * 4, op, "frameOfSet");
        return (int) Math.min(Integer.MAX_VALUE, skip.bytes() / frameBytes);
    }

    /**
     * SAM 2's output choice per set (one CTA each): the stability of mask 0 (single-mask mode), the chosen mask
     * index {@code chosen int [sets]}, its sigmoid IoU {@code ious [sets]}, the pointer token {@code ptrTokens
     * [sets, c]} (row 2 + token of {@code tokens [sets, nq, c]}); {@code masks [sets, 4, plane]}, {@code iouRaw
     * [sets, 4]}.
     */
    public void sam2Select(CudaStream s, DeviceBuffer masks, DeviceBuffer iouRaw, DeviceBuffer tokens, int sets, int nq, int c,
                    int plane, boolean multimask, float delta, float thresh, DeviceBuffer chosen, DeviceBuffer ious,
                    DeviceBuffer ptrTokens) {
        String op = f("sam2Select sets=%d nq=%d c=%d plane=%d multimask=%b", sets, nq, c, plane, multimask);
        require(sets > 0 && nq >= 6 && c > 0 && plane > 0, op + ": bad sizes");
        need(masks, (long) sets * 4 * plane * 4, op, "masks");
        need(iouRaw, (long) sets * 4 * 4, op, "iouRaw");
        need(tokens, (long) sets * nq * c * 4, op, "tokens");
        need(chosen, (long) sets * 4, op, "chosen");
        need(ious, (long) sets * 4, op, "ious");
        need(ptrTokens, (long) sets * c * 4, op, "ptrTokens");
        k.launchKernel(SAM2_SELECT, sets, 1, 1, THREADS, 1, s, Pointer.to(ptr(masks), ptr(iouRaw), ptr(tokens), i(nq),
                i(c), i(plane), i(multimask ? 1 : 0), Pointer.to(new float[] {delta}), Pointer.to(new float[] {thresh}),
                ptr(chosen), ptr(ious), ptr(ptrTokens)), op);
    }

    /**
     * SAM 2's gating per set: {@code lowRes [sets, plane]} = the chosen mask where {@code scores > 0}, else
     * {@code noObject}; {@code pointers} bf16 {@code [sets, c]} = {@code ptrMlp} there, else {@code noObjPtr [c]}.
     */
    public void sam2Finalize(CudaStream s, DeviceBuffer masks, DeviceBuffer chosen, DeviceBuffer scores, DeviceBuffer ptrMlp,
                      DeviceBuffer noObjPtr, DeviceBuffer lowRes, DeviceBuffer pointers, int sets, int plane, int c,
                      float noObject) {
        String op = f("sam2Finalize sets=%d plane=%d c=%d", sets, plane, c);
        require(sets > 0 && plane > 0 && c > 0, op + ": bad sizes");
        need(masks, (long) sets * 4 * plane * 4, op, "masks");
        need(chosen, (long) sets * 4, op, "chosen");
        need(scores, (long) sets * 4, op, "scores");
        need(ptrMlp, (long) sets * c * 4, op, "ptrMlp");
        need(noObjPtr, (long) c * 4, op, "noObjPtr");
        need(lowRes, (long) sets * plane * 4, op, "lowRes");
        need(pointers, (long) sets * c * 2, op, "pointers");
        grid(SAM2_FINALIZE, (long) sets * (plane + c), s, op, ptr(masks), ptr(chosen), ptr(scores), ptr(ptrMlp),
                ptr(noObjPtr), ptr(lowRes), ptr(pointers), i(sets), i(plane), i(c), Pointer.to(new float[] {noObject}));
    }

    // ------------------------------------------------------------------------------------------------

    private void grid(String name, long threads, CudaStream s, String op, Pointer... params) {
        k.launchKernel(name, gridFor(threads), 1, 1, THREADS, 1, s, Pointer.to(params), op);
    }

    private int gridFor(long threads) {
        long ctas = (threads + THREADS - 1) / THREADS;
        return (int) Math.max(1, Math.min(ctas, (long) multiprocessors * 16));
    }

    private static Pointer ptr(DeviceBuffer b) {
        return Pointer.to(b == null ? new CUdeviceptr() : b.pointer());
    }

    private static Pointer i(int v) {
        return Pointer.to(new int[] {v});
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    private static void need(DeviceBuffer b, long bytes, String op, String name) {
        if (b == null) {
            throw new IllegalArgumentException(op + ": " + name + " is required");
        }
        if (b.bytes() < bytes) {
            throw new IllegalArgumentException(op + ": " + name + " needs " + bytes + " B, " + b + " holds " + b.bytes());
        }
        if (b.offset() % 4 != 0) {
            throw new IllegalArgumentException(op + ": " + name + " must be 4-byte aligned");
        }
    }

    private static void need16(DeviceBuffer b, long bytes, String op, String name) {
        need(b, bytes, op, name);
        if (b.offset() % 16 != 0) {
            throw new IllegalArgumentException(op + ": " + name + " must be 16-byte aligned");
        }
    }
}
