package io.samstream.gpu.sparse;

import io.samstream.config.ModelSparsity;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies {@link ModelSparsity} to a SAM checkpoint: the chosen Linear weights of every image-encoder block
 * pruned to 2:4 ({@link TwoFourPruning}), everything else untouched. The result is the exact sparse model:
 * the CPU backend runs it as is (dense fp32 arithmetic on the pruned weights: the ground truth), the CUDA
 * backend compresses the same pruned weights ({@link TwoFourWeights}) for the sparse tensor cores.
 *
 * <p>A weight that already is 2:4 (a checkpoint written by {@code samstream prune}) is kept as it is;
 * pruning it again would change nothing anyway (pruning is idempotent).
 */
public final class SparseEncoder {
    private static final Logger log = LoggerFactory.getLogger(SparseEncoder.class);

    private static final String[] ALL = {"attn.qkv", "attn.proj", "mlp.lin1", "mlp.lin2"};
    private static final String[] MLP = {"mlp.lin1", "mlp.lin2"};

    private SparseEncoder() {}

    /** The module names (without {@code .weight}) of the Linears {@code layers} prunes, block by block. */
    public static List<String> prunedLinears(StateDict weights, ModelSparsity.Layers layers) {
        int depth = weights.countIndexed("image_encoder.blocks.");
        if (depth == 0) {
            throw new IllegalArgumentException(weights.source() + ": no image_encoder.blocks.* keys to prune");
        }
        List<String> names = new ArrayList<>();
        for (int b = 0; b < depth; b++) {
            for (String l : layers == ModelSparsity.Layers.ALL ? ALL : MLP) {
                names.add("image_encoder.blocks." + b + "." + l);
            }
        }
        return names;
    }

    /** True when {@code module} (e.g. {@code image_encoder.blocks.3.mlp.lin1}) is pruned under {@code sparsity}. */
    public static boolean isPruned(ModelSparsity sparsity, String module) {
        if (!sparsity.twoFour() || !module.startsWith("image_encoder.blocks.")) {
            return false;
        }
        for (String l : sparsity.layers() == ModelSparsity.Layers.ALL ? ALL : MLP) {
            if (module.endsWith("." + l)) {
                return true;
            }
        }
        return false;
    }

    /** {@code weights} with the Linears of {@code sparsity} pruned; the same object for the dense model. */
    public static StateDict apply(StateDict weights, ModelSparsity sparsity) {
        if (!sparsity.twoFour()) {
            return weights;
        }
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (String key : weights.keys()) {
            out.put(key, weights.get(key));
        }
        int pruned = 0, already = 0;
        for (String module : prunedLinears(weights, sparsity.layers())) {
            String key = module + ".weight";
            Tensor w = weights.get(key);
            if (w.rank() != 2) {
                throw new IllegalArgumentException(weights.source() + ": " + key + " has shape " + w.shapeString()
                        + "; a Linear weight [out, in] was expected");
            }
            int n = w.dim(0), k = w.dim(1);
            if (TwoFourPruning.satisfies(w.data(), n, k, key)) {
                already++;
            } else {
                out.put(key, new Tensor(TwoFourPruning.prune(w.data(), n, k, key), n, k));
                pruned++;
            }
        }
        log.info("sparsity {}: pruned {} encoder linear weights to 2:4{}", sparsity.describe(), pruned,
                already > 0 ? " (" + already + " were 2:4 already)" : "");
        return new StateDict(weights.source(), out);
    }
}
