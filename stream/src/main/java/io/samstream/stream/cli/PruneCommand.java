package io.samstream.stream.cli;

import io.samstream.config.ModelSparsity;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.CheckpointWriter;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.gpu.sparse.SparseEncoder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code samstream prune}: writes a checkpoint whose image-encoder Linears are pruned to 2:4, so that
 * later runs with {@code samstream.model.sparsity = 2:4} load it without pruning again (and so that the
 * pruned model can be fine-tuned elsewhere). The output is a safetensors file (fp32, Meta's key names),
 * whatever its name: samstream's main code has no writer of torch's zip format; PyTorch reads it with
 * {@code safetensors.torch.load_file}, samstream by content.
 */
@Command(
        name = "prune",
        mixinStandardHelpOptions = true,
        description = {
            "Prune a SAM checkpoint's image-encoder Linear weights to 2:4 sparsity and write it (safetensors).",
            "Keeps, in every group of four input features, the two weights of largest magnitude."
        })
final class PruneCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--checkpoint", required = true, paramLabel = "IN", description = "SAM checkpoint to prune.")
    Path checkpoint;

    @Option(names = "--out", required = true, paramLabel = "OUT",
            description = "Pruned checkpoint to write (safetensors content; e.g. sam_vit_b_2of4.safetensors).")
    Path out;

    @Option(names = "--layers", paramLabel = "all|mlp", defaultValue = "all",
            description = "all: attn.qkv, attn.proj, mlp.lin1, mlp.lin2 of every block; mlp: the MLPs only."
                    + " Default: ${DEFAULT-VALUE}.")
    String layers;

    @Override
    public Integer call() {
        ModelSparsity sparsity = new ModelSparsity(true, ModelSparsity.Layers.parse(layers, "--layers"));
        if (Files.exists(out) && out.toAbsolutePath().normalize().equals(checkpoint.toAbsolutePath().normalize())) {
            throw new ParameterException(spec.commandLine(), "--out must differ from --checkpoint (" + out + ")");
        }
        StateDict dense = CheckpointLoader.load(checkpoint);
        SamConfigInference.infer(dense);   // refuses what is not a SAM checkpoint before anything is written
        StateDict pruned = SparseEncoder.apply(dense, sparsity);
        CheckpointWriter.writeSafetensors(pruned, out, "2:4 pruned encoder linears (" + layers + ") of "
                + checkpoint.getFileName());
        spec.commandLine().getOut().printf("pruned %d encoder linear weights to 2:4 -> %s (safetensors)%n",
                SparseEncoder.prunedLinears(pruned, sparsity.layers()).size(), out);
        return 0;
    }
}
