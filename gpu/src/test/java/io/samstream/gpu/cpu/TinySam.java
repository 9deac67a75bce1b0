package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.model.SamCheckpointSchema;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/** Tiny SAM-shaped models with random weights, for tests that need a whole model. */
final class TinySam {
    private TinySam() {}

    /**
     * Image 48, patch 8: a 6x6 embedding grid, windows of 4 (so the grid is padded to 8x8), one global block;
     * prompt dim 32 with 2 decoder heads; low-res masks 24x24.
     */
    static SamConfig config() {
        return new SamConfig(48, 8, 32, 3, 2, 64, 4, new int[] {1}, 32, 8, 2, 2, 48, 2, 3, 3, 24);
    }

    /** Random weights of plausible scale: linear weights ~ N(0, 1/fan_in), norms near identity. */
    static StateDict weights(SamConfig c, long seed) {
        Random rnd = new Random(seed);
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        for (Map.Entry<String, int[]> entry : SamCheckpointSchema.expectedShapes(c).entrySet()) {
            String key = entry.getKey();
            int[] shape = entry.getValue();
            float[] data = new float[(int) Tensor.numel(shape)];
            boolean norm = key.contains("norm") || key.matches(".*neck\\.[13]\\..*")
                    || key.matches(".*mask_downscaling\\.[14]\\..*") || key.matches(".*output_upscaling\\.1\\..*");
            double sigma;
            double mean = 0;
            if (norm && key.endsWith(".weight")) {
                mean = 1;
                sigma = 0.1;
            } else if (key.endsWith(".bias") || key.contains("rel_pos") || key.endsWith("pos_embed")) {
                sigma = 0.1;
            } else if (key.endsWith("gaussian_matrix") || key.contains("embed") || key.contains("token")) {
                sigma = 1;
            } else {
                int fanIn = shape.length == 1 ? 1 : (int) (data.length / shape[0]);
                if (key.contains("output_upscaling")) {
                    fanIn = shape[0]; // ConvTranspose2d weights are [in, out, k, k]
                }
                sigma = 1 / Math.sqrt(fanIn);
            }
            for (int i = 0; i < data.length; i++) {
                data[i] = (float) (mean + sigma * rnd.nextGaussian());
            }
            tensors.put(key, new Tensor(data, shape));
        }
        return new StateDict(Path.of("tiny-random-sam"), tensors);
    }

    static Tensor randomImages(SamConfig c, int batch, long seed) {
        Random rnd = new Random(seed);
        int s = c.imageSize();
        float[] data = new float[batch * 3 * s * s];
        for (int i = 0; i < data.length; i++) {
            data[i] = (float) rnd.nextGaussian();
        }
        return new Tensor(data, batch, 3, s, s);
    }

    static float[] random(Random rnd, int n, double sigma) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) (sigma * rnd.nextGaussian());
        }
        return a;
    }
}
