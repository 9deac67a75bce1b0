package io.samstream.gpu.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The scores with a phrase's pooled MLP sum kept against the whole prompt's MLP (a prompt whose phrase is not known),
 * bit for bit, at the release widths (256 wide, hidden 2048, 32 phrase tokens).
 */
class DotProductScoringTest {
    private static final int D = 256;
    private static final int HIDDEN = 2048;
    private static final int CONTEXT = 32;
    private static final int QUERIES = 200;

    @Test
    void keptPhraseSumsGiveTheWholePromptsScores() {
        Random r = new Random(3);
        DotProductScoring scoring = scoring(r);
        float[] queries = gaussian(r, QUERIES * D);
        try (CpuThreadPool pool = new CpuThreadPool(3)) {
            TextFeatures a = phrase(r, 5);
            TextFeatures b = phrase(r, CONTEXT); // no padding
            for (int frame = 0; frame < 3; frame++) {
                for (TextFeatures phrase : List.of(a, b)) {
                    for (int boxes : new int[] {0, 2}) {
                        Prompt prompt = Prompt.concat(phrase, gaussian(r, (boxes + 1) * D), boxes + 1, D);
                        float[] whole = scoring.score(pool, queries, QUERIES,
                                new Prompt(prompt.rows(), prompt.padding()));
                        assertArrayEquals(whole, scoring.score(pool, queries, QUERIES, prompt),
                                "frame " + frame + ", " + boxes + " boxes");
                    }
                }
            }
        }
    }

    @Test
    void aKeptSumServesOnlyTheRowsItWasMadeFrom() {
        Random r = new Random(4);
        DotProductScoring scoring = scoring(r);
        float[] queries = gaussian(r, QUERIES * D);
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            TextFeatures phrase = phrase(r, 7);
            float[] geometry = gaussian(r, D);
            Prompt first = Prompt.concat(phrase, geometry, 1, D);
            float[] before = scoring.score(pool, queries, QUERIES, first);
            // the same phrase object with other rows in front (e.g. changed in place): a new sum, not the kept one
            float[] rows = first.rows().clone();
            rows[3 * D + 5] += 1f;
            Prompt changed = new Prompt(rows, first.padding(), phrase);
            float[] after = scoring.score(pool, queries, QUERIES, changed);
            assertArrayEquals(scoring.score(pool, queries, QUERIES, new Prompt(rows, first.padding())), after);
            assertFalse(Arrays.equals(before, after));
            assertArrayEquals(before, scoring.score(pool, queries, QUERIES, first));
        }
    }

    @Test
    void streamsScoringAtOnceGetTheWholePromptsScores() throws Exception {
        Random r = new Random(5);
        DotProductScoring scoring = scoring(r);
        float[] queries = gaussian(r, QUERIES * D);
        List<Prompt> prompts = new ArrayList<>();
        List<float[]> expected = new ArrayList<>();
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            // more phrases than are kept, so that sums are dropped and made again meanwhile
            List<TextFeatures> phrases = new ArrayList<>();
            for (int i = 0; i < DotProductScoring.PHRASE_CACHE + 8; i++) {
                phrases.add(phrase(r, 1 + r.nextInt(CONTEXT)));
            }
            for (int i = 0; i < 3 * phrases.size(); i++) {
                Prompt p = Prompt.concat(phrases.get(i % phrases.size()), gaussian(r, D), 1, D);
                prompts.add(p);
                expected.add(scoring.score(pool, queries, QUERIES, new Prompt(p.rows(), p.padding())));
            }
            ExecutorService streams = Executors.newFixedThreadPool(4);
            try {
                List<Future<float[]>> got = new ArrayList<>();
                for (Prompt p : prompts) {
                    got.add(streams.submit(() -> scoring.score(pool, queries, QUERIES, p)));
                }
                for (int i = 0; i < prompts.size(); i++) {
                    assertArrayEquals(expected.get(i), got.get(i).get(), "prompt " + i);
                }
            } finally {
                streams.shutdownNow();
            }
        }
    }

    @Test
    void aPhraseLongerThanThePromptIsRefused() {
        TextFeatures phrase = phrase(new Random(6), 3);
        assertThrows(IllegalArgumentException.class, () -> new Prompt(new float[4 * D], new boolean[4], phrase));
    }

    /** A phrase of CONTEXT tokens, the first {@code valid} of them not padding. */
    private static TextFeatures phrase(Random r, int valid) {
        int[] tokens = new int[CONTEXT];
        boolean[] padding = new boolean[CONTEXT];
        for (int t = 0; t < CONTEXT; t++) {
            tokens[t] = t < valid ? 1 + r.nextInt(100) : 0;
            padding[t] = t >= valid;
        }
        return new TextFeatures(tokens, gaussian(r, CONTEXT * D), padding);
    }

    private static DotProductScoring scoring(Random r) {
        String p = DotProductScoring.PREFIX;
        Map<String, Tensor> map = new LinkedHashMap<>();
        map.put(p + "prompt_mlp.layers.0.weight", tensor(r, 1 / Math.sqrt(D), HIDDEN, D));
        map.put(p + "prompt_mlp.layers.0.bias", tensor(r, 0.1, HIDDEN));
        map.put(p + "prompt_mlp.layers.1.weight", tensor(r, 1 / Math.sqrt(HIDDEN), D, HIDDEN));
        map.put(p + "prompt_mlp.layers.1.bias", tensor(r, 0.1, D));
        map.put(p + "prompt_mlp.out_norm.weight", tensor(r, 1, D));
        map.put(p + "prompt_mlp.out_norm.bias", tensor(r, 0.1, D));
        map.put(p + "prompt_proj.weight", tensor(r, 1 / Math.sqrt(D), D, D));
        map.put(p + "prompt_proj.bias", tensor(r, 0.1, D));
        map.put(p + "hs_proj.weight", tensor(r, 1 / Math.sqrt(D), D, D));
        map.put(p + "hs_proj.bias", tensor(r, 0.1, D));
        Sam3Config.Detector c = new Sam3Config.Detector(D, 8, 1, 64, 1, 64, QUERIES, 1, 64, 7, 1, HIDDEN);
        return new DotProductScoring(new StateDict(Path.of("scoring.pt"), map), c);
    }

    private static Tensor tensor(Random r, double std, int... shape) {
        return new Tensor(gaussianTimes(r, Math.toIntExact(Tensor.numel(shape)), std), shape);
    }

    private static float[] gaussian(Random r, int n) {
        return gaussianTimes(r, n, 1);
    }

    private static float[] gaussianTimes(Random r, int n, double std) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (r.nextGaussian() * std);
        }
        return v;
    }
}
