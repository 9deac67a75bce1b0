package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Linear;

/**
 * SAM 3's query scores ({@code DotProductScoring}): the prompt tokens through a residual ReLU MLP and a norm, mean-
 * pooled over the tokens that are not padding and projected; each query projected; the score is their dot product
 * / sqrt(d), clamped to [-12, 12]. A score is a logit: the probability of an instance is sigmoid(score) times
 * sigmoid(presence).
 */
final class DotProductScoring {
    static final String PREFIX = "dot_prod_scoring.";
    static final float CLAMP = 12f;

    private final Linear mlp0;
    private final Linear mlp1;
    private final LayerNorm outNorm;
    private final Linear promptProj;
    private final Linear queryProj;
    private final int d;

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
        int p = prompt.length();
        float[] h = mlp0.forward(pool, prompt.rows(), p);
        CpuOps.relu(h, h.length);
        float[] x = mlp1.forward(pool, h, p);
        CpuOps.addInPlace(pool, x, prompt.rows(), p * d);
        outNorm.apply(pool, x, p, x);
        float[] pooled = new float[d];
        int valid = 0;
        for (int t = 0; t < p; t++) {
            if (!prompt.padding()[t]) {
                valid++;
                for (int c = 0; c < d; c++) {
                    pooled[c] += x[t * d + c];
                }
            }
        }
        float count = Math.max(valid, 1);
        for (int c = 0; c < d; c++) {
            pooled[c] /= count;
        }
        float[] pp = promptProj.forward(pool, pooled, 1);
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
}
