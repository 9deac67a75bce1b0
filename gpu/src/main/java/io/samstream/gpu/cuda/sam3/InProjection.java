package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.DeviceWeights.Bf16;
import java.util.Arrays;

/**
 * Blocks of torch's packed MultiheadAttention {@code in_proj} ({@code [3d, d]}: query, key, value rows, and its bias)
 * as bf16 GEMM weights: SAM 3's GPU parts project a query and its keys from different inputs, so each takes the
 * blocks it multiplies together (the query alone, key + value, query + key).
 */
final class InProjection {
    private InProjection() {}

    /** Blocks {@code from..to} (0 query, 1 key, 2 value) of {@code w [3d, d]} and {@code b [3d]}, uploaded. */
    static Bf16 rows(DeviceWeights up, float[] w, float[] b, int d, int from, int to, String what) {
        return new Bf16(up.bf16(Arrays.copyOfRange(w, from * d * d, to * d * d), what + " weight"),
                up.bf16(Arrays.copyOfRange(b, from * d, to * d), what + " bias"));
    }
}
