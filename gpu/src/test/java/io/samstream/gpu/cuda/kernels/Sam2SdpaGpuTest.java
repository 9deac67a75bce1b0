package io.samstream.gpu.cuda.kernels;

import static io.samstream.gpu.cuda.GpuTestSupport.assertClose;
import static io.samstream.gpu.cuda.GpuTestSupport.gatherRows;
import static io.samstream.gpu.cuda.GpuTestSupport.randomBf16;
import static io.samstream.gpu.cuda.GpuTestSupport.sampleRows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.kernels.Sam2Kernels.Rows;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * SAM 2's attention at head dim 256 ({@link Sam2Kernels#sdpa}: the memory attention's head) on every kernel this GPU
 * has (sdpa.cuh's mma.sync kernel; on compute capability 9.0 also sdpa_sm90.cuh's warpgroup-MMA kernel) against a
 * double-precision reference: q, k, v as column ranges of one packed row set (row stride, head offset, a ragged last
 * query and key tile) and the memory attention's shape for one object (4,096 queries over 28,736 keys, split keys).
 * Outputs start as NaN, so a row the kernel never writes fails.
 */
class Sam2SdpaGpuTest extends GpuTestBase {
    private static final int HD = 256;

    @Test
    void packedRowsWithTwoHeadsMatchTheReference() {
        int batches = 2, heads = 2, n = 333, width = heads * HD, ld = 3 * width;
        Random rnd = new Random(71);
        float[] qkv = randomBf16(rnd, batches * n * ld, 1.0);
        float[] ref = reference(qkv, ld, 0, qkv, ld, width, qkv, ld, 2 * width, batches, heads, n, n, (long) n * ld,
                null);
        long mark = gpu.pool.mark();
        try {
            DeviceBuffer in = gpu.upload(qkv, "qkv");
            for (boolean hopper : kernels()) {
                DeviceBuffer out = gpu.poisoned((long) batches * n * width, "o");
                Sam2Kernels.of(gpu.kernels).sdpa(gpu.stream, rows(in, 0, ld, (long) n * ld), rows(in, width, ld, (long) n * ld),
                        rows(in, 2 * width, ld, (long) n * ld), new Rows(out, width, (long) n * width), batches, n, n,
                        heads, HD, scale(), null, hopper);
                assertClose(name(hopper) + " packed", ref, gpu.download(out, batches * n * width), 2e-2, 4e-3);
            }
        } finally {
            gpu.pool.release(mark);
        }
    }

    @Test
    void oneObjectsMemoryAttentionShapeWithSplitKeysMatchesTheReference() {
        int nq = 4096, nk = 7 * 4096 + 64;
        Random rnd = new Random(72);
        float[] q = randomBf16(rnd, nq * HD, 1.0), k = randomBf16(rnd, nk * HD, 1.0), v = randomBf16(rnd, nk * HD, 1.0);
        int[] sampled = sampleRows(rnd, 48, nq);
        float[] ref = reference(q, HD, 0, k, HD, 0, v, HD, 0, 1, 1, nq, nk, 0, sampled);
        long mark = gpu.pool.mark();
        try {
            DeviceBuffer qd = gpu.upload(q, "q"), kd = gpu.upload(k, "k"), vd = gpu.upload(v, "v");
            DeviceBuffer scratch = gpu.pool.allocate(Sam2Kernels.splitScratchBytes(1, 1, nq, HD, Sam2Kernels.MAX_SPLITS),
                    "split scratch");
            float[] first = null;
            for (boolean hopper : kernels()) {
                DeviceBuffer out = gpu.poisoned((long) nq * HD, "o");
                Sam2Kernels.of(gpu.kernels).sdpa(gpu.stream, new Rows(qd, HD, 0), new Rows(kd, HD, 0), new Rows(vd, HD, 0),
                        new Rows(out, HD, 0), 1, nq, nk, 1, HD, scale(), scratch, hopper);
                float[] all = gpu.download(out, nq * HD);
                for (float x : all) {
                    assertTrue(!Float.isNaN(x), name(hopper) + ": an output never written");
                }
                assertClose(name(hopper) + " one object", ref, gatherRows(all, sampled, HD), 2e-2, 4e-3);
                if (first == null) {
                    first = all;
                } else {
                    // Both kernels on every row (not only the sampled ones): the same function within bf16 rounding.
                    assertClose("wgmma against mma.sync, every row", first, all, 2e-2, 4e-3);
                }
            }
        } finally {
            gpu.pool.release(mark);
        }
    }

    /** The kernels to run: mma.sync everywhere, then the Hopper one where the GPU is sm_90. */
    private static List<Boolean> kernels() {
        List<Boolean> ks = new ArrayList<>(List.of(false));
        if (Sam2Kernels.of(gpu.kernels).hopperSdpa(HD)) {
            ks.add(true);
        } else {
            System.out.println("not compute capability 9.0: sdpa_sm90.cuh not run");
        }
        return ks;
    }

    private static String name(boolean hopper) {
        return hopper ? "sdpa_sm90 (wgmma)" : "sdpa (mma.sync)";
    }

    private static float scale() {
        return (float) (1 / Math.sqrt(HD));
    }

    private static Rows rows(DeviceBuffer b, int column, int ld, long batch) {
        return new Rows(b.slice((long) column * 2, b.bytes() - (long) column * 2, "columns from " + column), ld, batch);
    }

    /**
     * softmax(scale q.k^T).v in double per batch, head and query row ({@code rows}: only these query rows, in
     * order; null: all), rows {@code [batch, nq, heads * HD]}. Operand x's row i of batch z starts at
     * {@code z * batch + i * ld + off}.
     */
    private static float[] reference(float[] q, int qld, int qoff, float[] k, int kld, int koff, float[] v, int vld,
                                     int voff, int batches, int heads, int nq, int nk, long batch, int[] rows) {
        int[] qs = rows != null ? rows : IntStream.range(0, nq).toArray();
        float[] out = new float[batches * qs.length * heads * HD];
        double[] s = new double[nk];
        double scale = scale();
        for (int z = 0; z < batches; z++) {
            for (int h = 0; h < heads; h++) {
                for (int ri = 0; ri < qs.length; ri++) {
                    long qa = z * batch + (long) qs[ri] * qld + qoff + h * HD;
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j < nk; j++) {
                        long ka = z * batch + (long) j * kld + koff + h * HD;
                        double dot = 0;
                        for (int d = 0; d < HD; d++) {
                            dot += (double) q[(int) (qa + d)] * k[(int) (ka + d)];
                        }
                        s[j] = dot * scale;
                        max = Math.max(max, s[j]);
                    }
                    double sum = 0;
                    double[] acc = new double[HD];
                    for (int j = 0; j < nk; j++) {
                        double p = Math.exp(s[j] - max);
                        sum += p;
                        long va = z * batch + (long) j * vld + voff + h * HD;
                        for (int d = 0; d < HD; d++) {
                            acc[d] += p * v[(int) (va + d)];
                        }
                    }
                    int at = ((z * qs.length + ri) * heads + h) * HD;
                    for (int d = 0; d < HD; d++) {
                        out[at + d] = (float) (acc[d] / sum);
                    }
                }
            }
        }
        return out;
    }
}
