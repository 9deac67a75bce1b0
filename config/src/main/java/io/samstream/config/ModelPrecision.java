package io.samstream.config;

import java.util.Locale;

/**
 * The number format of the image encoder's matrix products on CUDA ({@code samstream.model.precision}). The CPU
 * backend is the fp32 reference and ignores it.
 */
public enum ModelPrecision {
    /** bf16 operands, fp32 accumulation: the default. */
    BF16("bf16"),
    /**
     * The encoder blocks' Linears (attn.qkv, attn.proj, mlp.lin1, mlp.lin2) with FP8 e4m3 operands: weights quantized
     * at load with one scale per output channel, activations per token by the kernel that writes them; fp32
     * accumulation, bf16 out. Hopper (compute capability 9.0) only; not combined with 2:4 sparsity.
     */
    FP8("fp8");

    private final String key;

    ModelPrecision(String key) {
        this.key = key;
    }

    /** Parses bf16 / fp8 (any case); the error names {@code where} and the accepted values. */
    public static ModelPrecision parse(String value, String where) {
        for (ModelPrecision p : values()) {
            if (p.key.equals(value.trim().toLowerCase(Locale.ROOT))) {
                return p;
            }
        }
        throw new ConfigException(where + ": unknown precision '" + value + "' (expected bf16 or fp8)");
    }

    /** The configuration value: "bf16" or "fp8". */
    @Override
    public String toString() {
        return key;
    }
}
