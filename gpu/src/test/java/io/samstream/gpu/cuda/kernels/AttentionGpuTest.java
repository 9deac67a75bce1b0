package io.samstream.gpu.cuda.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;

/**
 * Flash attention with SAM's decomposed relative position bias, windowed and global, against the
 * reference of image_encoder.py written out in {@link ReferenceOps#attention} (padding before the qkv
 * Linear, window partition, scores, softmax, unpartition) in double precision.
 *
 * <p>Error budget: the kernel rounds the softmax weights to bf16 before P.V (up to 2^-9 of each
 * weight) and the output to bf16 (2^-9 relative); scores and sums are fp32. Tolerance per element:
 * 2^-7 |ref| + 0.01 (the values are ~N(0, 1)), and the relative L2 error under 1e-2.
 */
class AttentionGpuTest extends GpuTestBase {
    @ParameterizedTest(name = "batch={0} grid={1}x{2} heads={3} hd={4} window={5} bias={6} sampled={7}")
    @CsvSource({
            // vit_b windowed block: 64x64 grid padded to 70x70, 25 windows of 14x14
            "2, 64, 64, 12, 64, 14, true, 0",
            // vit_h windowed block (head dim 80), sampled (token, head) pairs
            "1, 64, 64, 16, 80, 14, true, 3000",
            // vit_b / vit_h global blocks: 4096 tokens, sampled
            "1, 64, 64, 12, 64, 0, false, 1500",
            "1, 64, 64, 16, 80, 0, false, 800",
            // small and odd: non-square global grid, padding in both directions, no bias, other windows
            "2, 24, 40, 2, 80, 0, false, 0",
            "1, 40, 33, 2, 64, 0, true, 0",
            "1, 31, 32, 2, 80, 0, true, 0",
            "3, 20, 30, 3, 64, 14, true, 0",
            "1, 28, 28, 2, 64, 14, false, 0",
            "2, 20, 20, 2, 80, 8, true, 0",
            "1, 5, 9, 1, 64, 0, true, 0",
            // narrow heads (the SAM-shaped test models: head dim 16): windowed with padding, global
            "2, 16, 16, 2, 16, 6, true, 0",
            "2, 16, 16, 2, 16, 0, false, 0",
            "1, 64, 64, 2, 16, 14, true, 0",
            "1, 64, 64, 2, 16, 0, false, 600",
            "2, 20, 20, 4, 32, 14, true, 0",
            "1, 40, 40, 4, 32, 0, false, 0"})
    void matchesReference(int batch, int h, int w, int heads, int hd, int window, boolean withBias, int sampled) {
        check(batch, h, w, heads, hd, window, withBias, sampled);
    }

    /**
     * Head dim 64 on both kernels that serve it: the wgmma kernel (attention_sm90.cuh, chosen on Hopper) and the
     * mma.sync one (every other GPU; launched by name here, so Hopper tests it too). Global shapes walk the
     * wgmma kernel's edges: the vit_b block; sequences of 1 and 2 rows (fewer key tiles than the producer's lag), 10 and
     * 33 rows (the 5-slot ring wraps), a last query block with 3, 2 and 1 active consumer warpgroups (L = 340, 1225,
     * 80), a length that is a multiple of the 192 queries of a CTA (3072), rows narrower than the 64 key slots.
     * Windowed (half a window per CTA on wgmma): the vit_b block (64 x 64 padded to 70 x 70, the padding's k / v from
     * the qkv bias), padding in both directions, a grid that is a multiple of the window and no bias, windows of 16 (256
     * queries, every slot real), 9 and 11 (one CTA per window, a last key tile of 1 and 3 rows), 13.
     */
    @ParameterizedTest(name = "wgmma={8} batch={0} grid={1}x{2} heads={3} window={5} bias={6} sampled={7}")
    @CsvSource({
            "1, 64, 64, 12, 64, 0, false, 1500, true",
            "2, 48, 64, 3, 64, 0, false, 1500, true",
            "1, 33, 40, 2, 64, 0, true, 0, true",
            "3, 35, 35, 1, 64, 0, true, 0, true",
            "1, 10, 34, 2, 64, 0, false, 0, true",
            "1, 2, 40, 1, 64, 0, false, 0, true",
            "2, 1, 64, 2, 64, 0, false, 0, true",
            "1, 64, 64, 12, 64, 0, false, 1500, false",
            "3, 35, 35, 1, 64, 0, true, 0, false",
            "1, 2, 40, 1, 64, 0, false, 0, false",
            "2, 64, 64, 12, 64, 14, true, 0, true",
            "3, 20, 30, 3, 64, 14, true, 0, true",
            "1, 28, 28, 2, 64, 14, false, 0, true",
            "1, 40, 33, 2, 64, 16, true, 0, true",
            "2, 20, 20, 2, 64, 9, true, 0, true",
            "1, 30, 26, 2, 64, 11, true, 0, true",
            "1, 26, 30, 2, 64, 13, false, 0, true",
            "3, 20, 30, 3, 64, 14, true, 0, false",
            "1, 40, 33, 2, 64, 16, true, 0, false"})
    void headDim64OnEitherKernel(int batch, int h, int w, int heads, int hd, int window, boolean withBias, int sampled,
                                 boolean wgmma) {
        if (wgmma) {
            assumeTrue(gpu.kernels.hopper(), "Hopper attention tests skipped: the wgmma"
                    + " kernel needs compute capability 9.0, " + gpu.context.info().describe() + " is not");
        }
        check(batch, h, w, heads, hd, window, withBias, sampled, wgmma);
    }

    /**
     * Windowed blocks on the wgmma kernel (half a window per CTA), against the same reference and tolerances: every
     * window side 9 to 16, i.e. one CTA of 81 / 100 / 121 queries (2 active consumer warpgroups, the second partly
     * padded), two CTAs with 16 / 41 queries in the second (one active warpgroup there), 68 / 97 (the second warpgroup
     * with 4 / 33), 128 (every slot real); 3 and 4 key tiles; the vit_b block (64 x 64 padded to 70 x 70, the padding's
     * k / v from the qkv bias), padding in both directions, grids that are a multiple of the window, no bias, several
     * images and heads.
     */
    @ParameterizedTest(name = "batch={0} grid={1}x{2} heads={3} window={4} bias={5} sampled={6}")
    @CsvSource({
            "2, 64, 64, 12, 14, true, 0",
            "3, 20, 30, 3, 14, true, 0",
            "1, 28, 28, 2, 14, false, 0",
            "2, 20, 20, 2, 9, true, 0",
            "1, 23, 17, 3, 10, true, 0",
            "1, 30, 26, 2, 11, true, 0",
            "2, 24, 30, 2, 12, false, 0",
            "1, 26, 30, 2, 13, false, 0",
            "1, 29, 40, 2, 13, true, 0",
            "1, 30, 45, 3, 15, true, 0",
            "1, 40, 33, 2, 16, true, 0",
            "2, 32, 32, 1, 16, false, 0"})
    void windowedWgmma(int batch, int h, int w, int heads, int window, boolean withBias, int sampled) {
        assumeTrue(gpu.kernels.hopper(), "Hopper attention tests skipped: the wgmma"
                + " kernel needs compute capability 9.0, " + gpu.context.info().describe() + " is not");
        assertEquals(true, AttentionKernels.of(gpu.kernels).windowAttentionWgmma(64, window), "kernel choice");
        check(batch, h, w, heads, 64, window, withBias, sampled);
    }

    /**
     * The configurations of the wgmma kernel finish (no deadlock in the producer / consumer protocol) on sequences of
     * 1 to 13 key tiles around the ring depths, with 1 to 3 active consumer warpgroups, each launch checked against the
     * reference; windowed blocks with half a window per CTA; 60 s for launches that take
     * milliseconds. run-gpu-tests.sh hopper runs this first.
     */
    @Test
    void wgmmaKernelsFinish() {
        assumeTrue(gpu.kernels.hopper(), "Hopper attention tests skipped: the wgmma"
                + " kernel needs compute capability 9.0, " + gpu.context.info().describe() + " is not");
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(60), () -> {
            for (int rows : new int[] {1, 2, 3, 4, 5, 6, 7, 11, 13}) {
                check(1, rows, 40, 1, 64, 0, false, 0, true);   // rows key tiles; 1-3 consumers at 40 .. 520 queries
            }
            // Half a window per CTA (no mbarriers, but __syncthreads with warpgroups that have no query): 1 or 2 CTAs
            // per window, 1 or 2 active warpgroups, 3 or 4 key tiles, padding.
            for (int window : new int[] {9, 12, 14, 16}) {
                check(1, 2 * window - 3, window + 5, 1, 64, window, true, 0, true);
            }
        }, "the wgmma attention kernel did not finish within 60 s: a deadlock in its mbarrier protocol (attention_sm90.cuh)");
    }

    /** The wgmma kernel serves only what it was written for: other head dims and window sizes stay on mma.sync. */
    @Test
    void wgmmaKernelOnlyWhereItApplies() {
        boolean hopper = gpu.kernels.hopper();
        assertEquals(hopper, AttentionKernels.of(gpu.kernels).attentionWgmma(64, 0, 64));
        assertFalse(AttentionKernels.of(gpu.kernels).attentionWgmma(64, 14, 14), "windowed");
        assertFalse(AttentionKernels.of(gpu.kernels).attentionWgmma(80, 0, 64), "head dim 80");
        assertFalse(AttentionKernels.of(gpu.kernels).attentionWgmma(64, 0, 32), "rows of 32 keys or fewer");
        assertEquals(hopper, AttentionKernels.of(gpu.kernels).windowAttentionWgmma(64, 14));
        assertEquals(hopper, AttentionKernels.of(gpu.kernels).windowAttentionWgmma(64, 9));
        assertFalse(AttentionKernels.of(gpu.kernels).windowAttentionWgmma(64, 8), "windows of 8 or less");
        assertFalse(AttentionKernels.of(gpu.kernels).windowAttentionWgmma(64, 17), "windows over 16");
        assertFalse(AttentionKernels.of(gpu.kernels).windowAttentionWgmma(80, 14), "head dim 80");
    }

    /** As {@link #check(int, int, int, int, int, int, boolean, int, boolean)} on the kernel the shape's choice names. */
    private void check(int batch, int h, int w, int heads, int hd, int window, boolean withBias, int sampled) {
        boolean wgmma = window > 0 ? AttentionKernels.of(gpu.kernels).windowAttentionWgmma(hd, window) : AttentionKernels.of(gpu.kernels).attentionWgmma(hd, 0, w);
        check(batch, h, w, heads, hd, window, withBias, sampled, wgmma);
    }

    /** One launch against the reference; {@code wgmma} picks the Hopper kernel or the mma.sync one. */
    private void check(int batch, int h, int w, int heads, int hd, int window, boolean withBias, int sampled,
                       boolean wgmma) {
        long mark = gpu.pool.mark();
        Random rnd = new Random(batch * 1_000_003L + h * 1009L + w * 17L + heads * 5L + hd + window);
        int cTotal = heads * hd, tokens = h * w;
        int seqH = window > 0 ? window : h, seqW = window > 0 ? window : w;
        float[] qkv = GpuTestSupport.randomBf16(rnd, batch * tokens * 3 * cTotal, 1.0);
        float[] bias = withBias ? GpuTestSupport.randomBf16(rnd, 3 * cTotal, 0.5) : null;
        float[] relH = GpuTestSupport.randomBf16(rnd, (2 * seqH - 1) * hd, 0.2);
        float[] relW = GpuTestSupport.randomBf16(rnd, (2 * seqW - 1) * hd, 0.2);

        DeviceBuffer out = gpu.poisoned((long) batch * tokens * cTotal, "attention out");
        AttentionKernels.of(gpu.kernels).run(gpu.stream, gpu.upload(qkv, "qkv"), withBias ? gpu.upload(bias, "qkv bias") : null,
                gpu.upload(relH, "rel_h"), gpu.upload(relW, "rel_w"), out, batch, h, w, heads, hd, window, wgmma);
        float[] got = gpu.download(out, batch * tokens * cTotal);

        for (int b = 0; b < batch; b++) {
            float[] img = Arrays.copyOfRange(qkv, b * tokens * 3 * cTotal, (b + 1) * tokens * 3 * cTotal);
            int[] only = sampled > 0 ? rnd.ints(sampled, 0, tokens * heads).toArray() : null;
            float[] ref = ReferenceOps.attention(img, bias, relH, relW, h, w, heads, hd, window, only);
            float[] gotImg = Arrays.copyOfRange(got, b * tokens * cTotal, (b + 1) * tokens * cTotal);
            float[] r, o;
            if (only == null) {
                r = ref;
                o = gotImg;
            } else {   // compare the sampled (token, head) rows only
                r = new float[only.length * hd];
                o = new float[only.length * hd];
                for (int i = 0; i < only.length; i++) {
                    int base = (only[i] / heads) * cTotal + (only[i] % heads) * hd;
                    System.arraycopy(ref, base, r, i * hd, hd);
                    System.arraycopy(gotImg, base, o, i * hd, hd);
                }
                for (float v : gotImg) {
                    if (Float.isNaN(v)) {
                        throw new AssertionError("an output element was never written");
                    }
                }
            }
            GpuTestSupport.assertClose(String.format("attention image %d/%d grid=%dx%d heads=%d hd=%d window=%d%s", b,
                    batch, h, w, heads, hd, window, only == null ? "" : " (" + sampled + " sampled rows)"), r, o,
                    0x1p-7, 0.01);
        }
        gpu.pool.release(mark);
    }
}
