package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.sam3.Prompt;
import java.util.Random;

/** Inputs of the SAM 3 GPU tests at the release's shapes. */
final class ReleaseInputs {
    private ReleaseInputs() {}

    /**
     * A prompt as the detector builds one: 32 phrase rows of which the first 6 are valid and the rest padding holding
     * large values (a part that attends to padding shows it at once), then 3 valid geometry rows; width {@code d}.
     */
    static Prompt paddedPrompt(Random rnd, int d) {
        int n = 35;
        float[] rows = new float[n * d];
        boolean[] padding = new boolean[n];
        for (int t = 0; t < n; t++) {
            padding[t] = t >= 6 && t < 32;
            for (int ch = 0; ch < d; ch++) {
                rows[t * d + ch] = (float) (rnd.nextGaussian() * (padding[t] ? 8 : 1));
            }
        }
        return new Prompt(rows, padding);
    }
}
