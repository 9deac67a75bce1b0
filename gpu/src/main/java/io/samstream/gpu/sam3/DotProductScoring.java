package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Linear;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * SAM 3's query scores ({@code DotProductScoring}): the prompt tokens through a residual ReLU MLP and a norm, mean-
 * pooled over the tokens that are not padding and projected; each query projected; the score is their dot product
 * / sqrt(d), clamped to [-12, 12]. A score is a logit: the probability of an instance is sigmoid(score) times
 * sigmoid(presence).
 *
 * <p>The phrase's tokens lead every prompt made with it, frame after frame, while the geometry tokens after them
 * depend on the image. The MLP works token by token (its GEMMs give a row the same bits whatever rows come with it),
 * and the pooling adds the tokens in order, so the sum over a phrase's tokens is kept per phrase ({@link
 * Prompt#phrase}, at most {@link #PHRASE_CACHE} phrases, the least recently used going first) and the frame adds its
 * geometry tokens to it: the same bits as the whole prompt's MLP. A kept sum is used only for the very rows and
 * padding it was made from. Several streams may score at once.
 */
final class DotProductScoring {
    static final String PREFIX = "dot_prod_scoring.";
    static final float CLAMP = 12f;
    /** Phrases whose pooled MLP sums are kept. */
    static final int PHRASE_CACHE = 64;

    private final Linear mlp0;
    private final Linear mlp1;
    private final LayerNorm outNorm;
    private final Linear promptProj;
    private final Linear queryProj;
    private final int d;
    /** Guarded by itself. */
    private final Map<TextFeatures, PhraseSum> phrases = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<TextFeatures, PhraseSum> eldest) {
            return size() > PHRASE_CACHE;
        }
    };

    /**
     * A phrase's part of the pooling: the MLP of its tokens that are not padding, added in token order, and how many
     * they are; with the rows and padding it was made from.
     */
    private record PhraseSum(float[] rows, boolean[] padding, float[] sum, int valid) {}

    DotProductScoring(StateDict sd, Sam3Config.Detector c) {
        this.d = c.dModel();
        this.mlp0 = Linear.load(sd, PREFIX + "prompt_mlp.layers.0", d, c.scoringHidden());
        this.mlp1 = Linear.load(sd, PREFIX + "prompt_mlp.layers.1", c.scoringHidden(), d);
        this.outNorm = LayerNorm.load(sd, PREFIX + "prompt_mlp.out_norm", d, Sam3Config.NORM_EPS);
        this.promptProj = Linear.load(sd, PREFIX + "prompt_proj", d, d);
        this.queryProj = Linear.load(sd, PREFIX + "hs_proj", d, d);
    }

    /** The logits [n] of queries [n, d] for the prompt. */
    float[] score(CpuThreadPool pool, float[] queries, int n, Prompt prompt) {
        float[] pp = promptProj.forward(pool, pooled(pool, prompt), 1);
        float[] qp = queryProj.forward(pool, queries, n);
        float scale = (float) (1.0 / Math.sqrt(d));
        float[] scores = new float[n];
        for (int q = 0; q < n; q++) {
            float dot = 0f;
            for (int c = 0; c < d; c++) {
                dot += qp[q * d + c] * pp[c];
            }
            scores[q] = Math.max(-CLAMP, Math.min(CLAMP, dot * scale));
        }
        return scores;
    }

    /** The prompt's tokens through the MLP, averaged over those that are not padding [d]. */
    private float[] pooled(CpuThreadPool pool, Prompt prompt) {
        int lead = prompt.phrase() == null ? 0 : prompt.phrase().length();
        float[] pooled;
        int valid;
        if (lead > 0) {
            PhraseSum part = phraseSum(pool, prompt, lead);
            pooled = part.sum().clone();
            valid = part.valid();
        } else {
            pooled = new float[d];
            valid = 0;
        }
        valid = accumulate(pool, prompt, lead, prompt.length(), pooled, valid);
        float count = Math.max(valid, 1);
        for (int c = 0; c < d; c++) {
            pooled[c] /= count;
        }
        return pooled;
    }

    /** The kept sum of the prompt's first {@code lead} tokens (its phrase's), or a new one kept from now on. */
    private PhraseSum phraseSum(CpuThreadPool pool, Prompt prompt, int lead) {
        PhraseSum part;
        synchronized (phrases) {
            part = phrases.get(prompt.phrase());
        }
        if (part != null && Arrays.equals(part.rows(), 0, lead * d, prompt.rows(), 0, lead * d)
                && Arrays.equals(part.padding(), 0, lead, prompt.padding(), 0, lead)) {
            return part;
        }
        float[] sum = new float[d];
        int valid = accumulate(pool, prompt, 0, lead, sum, 0);
        part = new PhraseSum(Arrays.copyOf(prompt.rows(), lead * d), Arrays.copyOf(prompt.padding(), lead), sum,
                valid);
        synchronized (phrases) {
            phrases.put(prompt.phrase(), part);
        }
        return part;
    }

    /**
     * Adds the MLP of the prompt's tokens [from, to) that are not padding to {@code sum}, in token order.
     *
     * @return {@code valid} plus how many were added
     */
    private int accumulate(CpuThreadPool pool, Prompt prompt, int from, int to, float[] sum, int valid) {
        int k = to - from;
        if (k == 0) {
            return valid;
        }
        float[] rows = Arrays.copyOfRange(prompt.rows(), from * d, to * d);
        float[] h = mlp0.forward(pool, rows, k);
        CpuOps.relu(h, h.length);
        float[] x = mlp1.forward(pool, h, k);
        CpuOps.addInPlace(pool, x, rows, k * d);
        outNorm.apply(pool, x, k, x);
        for (int t = 0; t < k; t++) {
            if (!prompt.padding()[from + t]) {
                valid++;
                for (int c = 0; c < d; c++) {
                    sum[c] += x[t * d + c];
                }
            }
        }
        return valid;
    }
}
