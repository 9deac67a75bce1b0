package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sparse.TwoFourPruning;
import io.samstream.gpu.tensor.Npy;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.testkit.TestModels;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code samstream prune} writes a checkpoint whose encoder Linears are 2:4 and everything else unchanged;
 * {@code segment --sparsity 2:4} gives the same embedding from it as from the dense checkpoint pruned at
 * load, and a different one from the dense model.
 */
class PruneCommandTest {
    private static final Path FIXTURES = TestModels.tinySamDir();
    private static final Path MODEL = FIXTURES.resolve("model.pth");
    private static final Path IMAGE = FIXTURES.resolve("landscape-shrink").resolve("image.png");

    @TempDir
    Path tmp;

    @Test
    void prunedCheckpointIsTwoFourAndSegmentsLikePruningAtLoad() throws Exception {
        Path pruned = tmp.resolve("tiny-2of4.safetensors");
        Result r = run("prune", "--checkpoint", MODEL.toString(), "--out", pruned.toString(), "--layers", "mlp");
        assertEquals(0, r.code, r.err);
        assertTrue(r.out.contains("-> " + pruned), r.out);

        StateDict dense = CheckpointLoader.load(MODEL), sparse = CheckpointLoader.load(pruned);
        assertEquals(dense.keys(), sparse.keys());
        int prunedCount = 0;
        for (String key : dense.keys()) {
            Tensor a = dense.get(key), b = sparse.get(key);
            assertArrayEquals(a.shape(), b.shape(), key);
            boolean mlp = key.startsWith("image_encoder.blocks.") && key.matches(".*\\.mlp\\.lin[12]\\.weight");
            if (mlp) {
                assertTrue(TwoFourPruning.satisfies(b.data(), b.dim(0), b.dim(1), key), key);
                assertArrayEquals(TwoFourPruning.prune(a.data(), a.dim(0), a.dim(1), key), b.data(), key);
                prunedCount++;
            } else {
                assertArrayEquals(a.data(), b.data(), key + " must be unchanged");
            }
        }
        assertTrue(prunedCount >= 2, "pruned " + prunedCount);

        float[] fromPruned = embedding("p", pruned, "2:4");
        float[] prunedAtLoad = embedding("q", MODEL, "2:4");
        float[] denseModel = embedding("d", MODEL, "none");
        // The file is MLP-pruned: run as is, it equals MLP pruning at load (config sparse-layers = mlp);
        // with --sparsity 2:4 (layers = all, the default) attention is pruned on top, at load.
        assertFalse(java.util.Arrays.equals(fromPruned, denseModel), "2:4 must change the embedding");
        assertNotEquals(0, fromPruned.length);
        assertArrayEquals(embedding("m", pruned, "none"), embeddingMlpAtLoad(), "pre-pruned file = MLP pruning at load");
        assertFalse(java.util.Arrays.equals(prunedAtLoad, denseModel));
    }

    @Test
    void badArgumentsAreNamed() {
        Result r = run("prune", "--checkpoint", MODEL.toString(), "--out", tmp.resolve("x").toString(), "--layers", "qkv");
        assertNotEquals(0, r.code);
        assertTrue(r.err.contains("--layers") && r.err.contains("all or mlp"), r.err);
        r = run("segment", "--checkpoint", MODEL.toString(), "--image", IMAGE.toString(), "--point", "10,10",
                "--device", "cpu", "--sparsity", "1:2", "--out", tmp.resolve("y").toString());
        assertNotEquals(0, r.code);
        assertTrue(r.err.contains("--sparsity") && r.err.contains("none or 2:4"), r.err);
    }

    private float[] embeddingMlpAtLoad() throws Exception {
        Path conf = tmp.resolve("mlp.conf");
        java.nio.file.Files.writeString(conf, "samstream.model { sparsity = \"2:4\", sparse-layers = mlp }");
        Path out = tmp.resolve("mlp-at-load");
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", IMAGE.toString(), "--point", "100,90",
                "--device", "cpu", "--threads", "2", "-c", conf.toString(), "--npy", "--out", out.toString());
        assertEquals(0, r.code, r.err);
        return Npy.read(out.resolve("embedding.npy")).toFloats();
    }

    private float[] embedding(String name, Path checkpoint, String sparsity) throws Exception {
        Path out = tmp.resolve(name);
        Result r = run("segment", "--checkpoint", checkpoint.toString(), "--image", IMAGE.toString(), "--point",
                "100,90", "--device", "cpu", "--threads", "2", "--sparsity", sparsity, "--npy", "--out", out.toString());
        assertEquals(0, r.code, r.err);
        return Npy.read(out.resolve("embedding.npy")).toFloats();
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SamstreamCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(code, out.toString(), err.toString());
    }

    private record Result(int code, String out, String err) {}
}
