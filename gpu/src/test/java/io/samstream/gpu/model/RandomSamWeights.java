package io.samstream.gpu.model;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Test utility: a complete SAM state_dict of random weights for any {@link SamConfig}, built from
 * {@link SamCheckpointSchema} so it always has every key with the right shape.
 *
 * <p>Values are deterministic for a seed and roughly as scaled as trained weights, so forward passes
 * stay finite: linear and conv weights N(0, 1/fan_in), biases N(0, 0.02), LayerNorm weights
 * 1 + N(0, 0.1), position tables N(0, 0.02), embeddings and the random Fourier matrix N(0, 1).
 */
public final class RandomSamWeights {
    private RandomSamWeights() {}

    /**
     * A SAM-shaped model small enough for unit tests: 64 px input, patch 8 (an 8x8 grid), width 32,
     * 4 blocks of 2 heads, window 4, global blocks 1 and 3, prompt width 32, 8 mask channels, a 2-layer
     * decoder (8 heads of 2, MLP 64), 3 multimask outputs and a 3-layer IoU head of width 32.
     */
    public static SamConfig tinyConfig() {
        return new SamConfig(64, 8, 32, 4, 2, 64, 4, new int[] {1, 3}, 32, 8, 2, 8, 64, 2, 3, 3, 32);
    }

    /** Key to random tensor for every tensor of {@code config}, in schema order. */
    public static Map<String, Tensor> tensors(SamConfig config, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        SamCheckpointSchema.expectedShapes(config).forEach((key, shape) -> {
            Tensor t = Tensor.zeros(shape);
            fill(key, t, random);
            tensors.put(key, t);
        });
        return tensors;
    }

    /** A {@link StateDict} of {@link #tensors}; its source path names the config and seed. */
    public static StateDict stateDict(SamConfig config, long seed) {
        return new StateDict(Path.of("random-weights-seed-" + seed), tensors(config, seed));
    }

    private static void fill(String key, Tensor t, SplittableRandom random) {
        float[] d = t.data();
        double mean = 0;
        double std;
        if (key.endsWith(".bias")) {
            std = 0.02;
        } else if (t.rank() == 1) {
            mean = 1; // every rank-1 weight in SAM is a LayerNorm scale
            std = 0.1;
        } else if (key.endsWith("pos_embed") || key.contains("rel_pos_")) {
            std = 0.02;
        } else if (isEmbedding(key)) {
            std = 1;
        } else {
            long fanIn = t.size() / t.dim(0);
            std = 1 / Math.sqrt(fanIn);
        }
        for (int i = 0; i < d.length; i++) {
            d[i] = (float) (mean + std * gaussian(random));
        }
    }

    private static boolean isEmbedding(String key) {
        return key.contains("point_embeddings.") || key.endsWith("not_a_point_embed.weight")
                || key.endsWith("no_mask_embed.weight") || key.endsWith("_token.weight")
                || key.endsWith("mask_tokens.weight") || key.endsWith("positional_encoding_gaussian_matrix");
    }

    private static double gaussian(SplittableRandom random) {
        // Box-Muller; SplittableRandom has no nextGaussian on Java 17.
        double u = 1 - random.nextDouble();
        double v = random.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    }
}
