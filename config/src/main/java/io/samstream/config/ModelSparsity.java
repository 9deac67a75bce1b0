package io.samstream.config;

import java.util.Locale;

/**
 * Weight sparsity of the image encoder ({@code samstream.model.sparsity}, {@code samstream.model.sparse-layers}).
 *
 * @param twoFour true for 2:4 semi-structured sparsity (the chosen encoder Linear weights pruned at load to
 *                two non-zeros in every four consecutive input features), false for the dense model
 * @param layers  which encoder Linears are pruned (ignored when {@code twoFour} is false)
 */
public record ModelSparsity(boolean twoFour, Layers layers) {
    /** The dense model. */
    public static final ModelSparsity NONE = new ModelSparsity(false, Layers.ALL);

    /** Which Linears of every encoder block are pruned. */
    public enum Layers {
        /** attn.qkv, attn.proj, mlp.lin1, mlp.lin2. */
        ALL,
        /** mlp.lin1 and mlp.lin2 only (two thirds of the encoder's GEMM FLOPs; attention stays dense). */
        MLP;

        /** Parses all / mlp (any case); the error names {@code where} and the accepted values. */
        public static Layers parse(String value, String where) {
            return switch (value.trim().toLowerCase(Locale.ROOT)) {
                case "all" -> ALL;
                case "mlp" -> MLP;
                default -> throw new ConfigException(where + ": unknown value '" + value + "' (expected all or mlp)");
            };
        }
    }

    public ModelSparsity {
        if (layers == null) {
            throw new IllegalArgumentException("layers must not be null");
        }
    }

    /** Parses none / 2:4 and the layer choice; errors name {@code where}'s keys. */
    public static ModelSparsity parse(String sparsity, String layers, String sparsityWhere, String layersWhere) {
        Layers l = Layers.parse(layers, layersWhere);
        return switch (sparsity.trim().toLowerCase(Locale.ROOT)) {
            case "none" -> new ModelSparsity(false, l);
            case "2:4" -> new ModelSparsity(true, l);
            default -> throw new ConfigException(sparsityWhere + ": unknown sparsity '" + sparsity
                    + "' (expected none or 2:4)");
        };
    }

    /** "none", "2:4 (all encoder linears)" or "2:4 (encoder MLPs)": for logs and backend names. */
    public String describe() {
        return !twoFour ? "none" : layers == Layers.ALL ? "2:4 (all encoder linears)" : "2:4 (encoder MLPs)";
    }
}
