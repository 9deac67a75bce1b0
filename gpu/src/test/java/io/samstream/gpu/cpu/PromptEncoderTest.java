package io.samstream.gpu.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PromptEncoderTest {
    private static final SamConfig CONFIG = TinySam.config();
    private static final StateDict WEIGHTS = TinySam.weights(CONFIG, 11);
    private static final PromptEncoderCpu ENCODER = new PromptEncoderCpu(WEIGHTS, CONFIG);
    private static final int C = CONFIG.promptDim();

    private static float[] weight(String key) {
        return WEIGHTS.get("prompt_encoder." + key).data();
    }

    /** The position encoding of a point in input pixels, straight from the definition, in double. */
    private static float[] pe(double px, double py) {
        float[] g = weight("pe_layer.positional_encoding_gaussian_matrix");
        int half = C / 2;
        double x = 2 * ((px + 0.5) / CONFIG.imageSize()) - 1;
        double y = 2 * ((py + 0.5) / CONFIG.imageSize()) - 1;
        float[] out = new float[C];
        for (int k = 0; k < half; k++) {
            double v = 2 * Math.PI * (x * g[k] + y * g[half + k]);
            out[k] = (float) Math.sin(v);
            out[half + k] = (float) Math.cos(v);
        }
        return out;
    }

    private static float[] plus(float[] a, float[] b) {
        float[] r = new float[a.length];
        for (int i = 0; i < a.length; i++) {
            r[i] = a[i] + b[i];
        }
        return r;
    }

    private static float[] row(float[] m, int r) {
        return Arrays.copyOfRange(m, r * C, (r + 1) * C);
    }

    @Test
    void pointsWithoutBoxGetAPaddingPoint() {
        Prompt p = new Prompt(new float[][] {{10, 20}, {3.5f, 40}, {0, 0}}, new int[] {1, 0, -1}, null, null);
        float[] sparse = ENCODER.sparse(p);
        assertEquals(4, PromptEncoderCpu.sparseCount(p));
        assertEquals(4 * C, sparse.length);
        assertArrayEquals(plus(pe(10, 20), weight("point_embeddings.1.weight")), row(sparse, 0), 2e-5f);
        assertArrayEquals(plus(pe(3.5, 40), weight("point_embeddings.0.weight")), row(sparse, 1), 2e-5f);
        // label -1: the encoding is dropped, only not_a_point_embed remains
        assertArrayEquals(weight("not_a_point_embed.weight"), row(sparse, 2));
        assertArrayEquals(weight("not_a_point_embed.weight"), row(sparse, 3));
    }

    @Test
    void boxReplacesThePaddingPointAndComesAfterThePoints() {
        float[] box = {4, 6, 30, 41};
        Prompt p = new Prompt(new float[][] {{7, 8}}, new int[] {1}, box, null);
        float[] sparse = ENCODER.sparse(p);
        assertEquals(3, PromptEncoderCpu.sparseCount(p));
        assertArrayEquals(plus(pe(7, 8), weight("point_embeddings.1.weight")), row(sparse, 0), 2e-5f);
        assertArrayEquals(plus(pe(4, 6), weight("point_embeddings.2.weight")), row(sparse, 1), 2e-5f);
        assertArrayEquals(plus(pe(30, 41), weight("point_embeddings.3.weight")), row(sparse, 2), 2e-5f);

        Prompt boxOnly = new Prompt(null, null, box, null);
        assertEquals(2, PromptEncoderCpu.sparseCount(boxOnly));
        assertArrayEquals(Arrays.copyOfRange(sparse, C, 3 * C), ENCODER.sparse(boxOnly));
    }

    @Test
    void noPromptHasNoSparseTokensAndOtherLabelsKeepThePlainEncoding() {
        assertEquals(0, ENCODER.sparse(new Prompt(null, null, null, null)).length);
        Prompt odd = new Prompt(new float[][] {{5, 5}}, new int[] {2}, null, null);
        assertArrayEquals(pe(5, 5), row(ENCODER.sparse(odd), 0), 2e-5f);
        Prompt none = new Prompt(new float[0][], new int[0], null, null);
        assertEquals(1, PromptEncoderCpu.sparseCount(none), "an empty point list still gets the padding point");
    }

    @Test
    void denseWithoutMaskIsNoMaskEmbedEverywhere() {
        Tensor dense = ENCODER.denseEmbeddings(new Prompt(null, null, null, null));
        int e = CONFIG.embeddingSize();
        assertArrayEquals(new int[] {C, e, e}, dense.shape());
        float[] noMask = weight("no_mask_embed.weight");
        for (int ch = 0; ch < C; ch++) {
            for (int p = 0; p < e * e; p++) {
                assertEquals(noMask[ch], dense.data()[ch * e * e + p]);
            }
        }
    }

    @Test
    void denseMaskFollowsTheDownscalingStack() {
        int l = CONFIG.lowResSize();
        int mi = CONFIG.maskInChans();
        Random rnd = new Random(12);
        float[] mask = TinySam.random(rnd, l * l, 3);
        Tensor dense = ENCODER.denseEmbeddings(new Prompt(null, null, null, new Tensor(mask, 1, l, l)));

        // conv 2x2 s2 -> LN2d -> GELU -> conv 2x2 s2 -> LN2d -> GELU -> conv 1x1, channels-first, in double.
        String d = "mask_downscaling.";
        int h = l / 2;
        float[] x = NaiveOps.conv2d(mask, 1, l, l, weight(d + "0.weight"), weight(d + "0.bias"), mi / 4, 2, 2, 0);
        x = NaiveOps.gelu(NaiveOps.layerNorm2d(x, mi / 4, h * h, weight(d + "1.weight"), weight(d + "1.bias"), 1e-6));
        x = NaiveOps.conv2d(x, mi / 4, h, h, weight(d + "3.weight"), weight(d + "3.bias"), mi, 2, 2, 0);
        h /= 2;
        x = NaiveOps.gelu(NaiveOps.layerNorm2d(x, mi, h * h, weight(d + "4.weight"), weight(d + "4.bias"), 1e-6));
        x = NaiveOps.conv2d(x, mi, h, h, weight(d + "6.weight"), weight(d + "6.bias"), C, 1, 1, 0);
        double diff = NaiveOps.maxAbsDiff(x, dense.data());
        assertTrue(diff < 2e-5, "dense mask embedding differs by " + diff);

        assertThrows(IllegalArgumentException.class,
                () -> ENCODER.denseEmbeddings(new Prompt(null, null, null, Tensor.zeros(1, l, l - 1))));
    }

    @Test
    void densePositionalEncodingUsesCellCentres() {
        Tensor pe = ENCODER.densePe();
        int e = CONFIG.embeddingSize();
        float[] g = weight("pe_layer.positional_encoding_gaussian_matrix");
        int half = C / 2;
        for (int i = 0; i < e; i++) {
            for (int j = 0; j < e; j++) {
                double x = 2 * ((j + 0.5) / e) - 1;
                double y = 2 * ((i + 0.5) / e) - 1;
                for (int k = 0; k < half; k++) {
                    double v = 2 * Math.PI * (x * g[k] + y * g[half + k]);
                    assertEquals(Math.sin(v), pe.data()[(k * e + i) * e + j], 2e-5);
                    assertEquals(Math.cos(v), pe.data()[((half + k) * e + i) * e + j], 2e-5);
                }
            }
        }
    }
}
