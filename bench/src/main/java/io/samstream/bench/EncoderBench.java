package io.samstream.bench;

import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

import io.samstream.config.CudaSettings;
import io.samstream.config.ModelPrecision;
import io.samstream.config.ModelSparsity;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.sam.CudaSamBackend;
import io.samstream.gpu.cuda.sam.CudaSamOptions;
import io.samstream.gpu.model.SamCheckpointSchema;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.sparse.SparseEncoder;
import io.samstream.gpu.tensor.Tensor;

/**
 * The whole vit_b image encoder of {@link CudaSamBackend} (random weights in the official shapes, 1024 px)
 * at batch 1, 8 and 32 (or the batches given): GPU ms per batch between CUDA events over back-to-back
 * passes on a staged input, end-to-end {@code encode()} time (host copies and transfers included), the
 * device pool's size and the cuMemGetInfo drop when the backend opened, and where the GPU time goes per
 * step. One backend per batch, sized for that batch (so its memory is that batch's).
 *
 * <pre>java -cp ... io.samstream.bench.EncoderBench [--model vit_b|vit_l|vit_h] [--sparsity 2:4 [--sparse-layers all|mlp]]
 *      [--precision bf16|fp8] OUT.tsv [batch...]</pre>
 *
 * With {@code --sparsity 2:4} the random weights are pruned first and the pruned Linears run on the sparse
 * GEMM (the TSV's {@code meta sparsity} line says which); with {@code --precision fp8} the blocks' Linears run on the
 * e4m3 GEMM ({@code meta precision}).
 *
 * bench/encoder_torch.py then measures Meta's encoder in bf16 eager on the same GPU and writes the table.
 */
public final class EncoderBench {
    static SamConfig vitB() {
        return new SamConfig(1024, 16, 768, 12, 12, 3072, 14, new int[] {2, 5, 8, 11}, 256, 16, 2, 8, 2048, 2, 3, 3,
                256);
    }

    /** The official image encoders' shapes (Meta's build_sam_vit_*), the same prompt encoder and mask decoder. */
    static SamConfig model(String name) {
        return switch (name) {
            case "vit_b" -> vitB();
            case "vit_l" -> new SamConfig(1024, 16, 1024, 24, 16, 4096, 14, new int[] {5, 11, 17, 23}, 256, 16, 2, 8,
                    2048, 2, 3, 3, 256);
            case "vit_h" -> new SamConfig(1024, 16, 1280, 32, 16, 5120, 14, new int[] {7, 15, 23, 31}, 256, 16, 2, 8,
                    2048, 2, 3, 3, 256);
            default -> throw new IllegalArgumentException("--model: vit_b, vit_l or vit_h, got " + name);
        };
    }

    /** Every tensor of the config, uniform values of roughly trained scale (timing only needs finite values). */
    static StateDict randomWeights(SamConfig c, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        Map<String, Tensor> t = new LinkedHashMap<>();
        SamCheckpointSchema.expectedShapes(c).forEach((key, shape) -> {
            Tensor x = Tensor.zeros(shape);
            float[] d = x.data();
            double mean = 0, std;
            if (key.endsWith(".bias")) {
                std = 0.02;
            } else if (x.rank() == 1) {
                mean = 1;
                std = 0.1;
            } else if (key.endsWith("pos_embed") || key.contains("rel_pos_")) {
                std = 0.02;
            } else {
                std = 1 / Math.sqrt((double) x.size() / x.dim(0));
            }
            double a = std * Math.sqrt(3);
            for (int i = 0; i < d.length; i++) {
                d[i] = (float) (mean + a * (2 * r.nextDouble() - 1));
            }
            t.put(key, x);
        });
        return new StateDict(Path.of("random-vit_b"), t);
    }

    static long freeBytes() {
        long[] free = new long[1], total = new long[1];
        cuMemGetInfo(free, total);
        return free[0];
    }

    public static void main(String[] args) throws IOException {
        // --sparsity 2:4 [--sparse-layers all|mlp]: the encoder with pruned Linears on the sparse GEMM.
        java.util.List<String> rest = new java.util.ArrayList<>(java.util.List.of(args));
        String modelName = option(rest, "--model", "vit_b");
        ModelSparsity sparsity = ModelSparsity.parse(option(rest, "--sparsity", "none"),
                option(rest, "--sparse-layers", "all"), "--sparsity", "--sparse-layers");
        ModelPrecision precision = ModelPrecision.parse(option(rest, "--precision", "bf16"), "--precision");
        args = rest.toArray(new String[0]);
        Path outPath = Path.of(args.length > 0 ? args[0] : "encoder-bench.tsv");
        int[] batches = args.length > 1 ? java.util.Arrays.stream(args, 1, args.length).mapToInt(Integer::parseInt).toArray()
                : new int[] {1, 8, 32};
        SamConfig config = model(modelName);
        long t0 = System.nanoTime();
        StateDict weights = SparseEncoder.apply(randomWeights(config, 1), sparsity);
        System.out.printf(Locale.ROOT, "random %s weights: %.1f s%n", modelName, (System.nanoTime() - t0) / 1e9);
        Files.createDirectories(outPath.toAbsolutePath().getParent());
        try (CudaContext ctx = CudaContext.open(0);
             PrintWriter out = new PrintWriter(Files.newBufferedWriter(outPath))) {
            out.println("meta\tdevice\t" + ctx.info().describe());
            out.println("meta\tsparsity\t" + sparsity.describe());
            out.println("meta\tprecision\t" + precision);
            out.println("meta\tmodel\t" + modelName);
            for (int batch : batches) {
                ctx.bind();
                long before = freeBytes();
                try (CudaSamBackend backend = new CudaSamBackend(weights, config,
                        CudaSamOptions.builder(batch).decoderThreads(4).sparsity(sparsity)
                                .cuda(CudaSettings.DEFAULTS.withPrecision(precision)).build())) {
                    ctx.bind();
                    long delta = before - freeBytes();
                    Tensor images = random(batch, config.imageSize(), batch);
                    backend.stageInput(images);
                    backend.timeForward(batch, 2);   // warm-up (module load, clocks)
                    int iters = Math.max(5, 64 / batch);
                    double ms = backend.timeForward(batch, iters);
                    // End to end: encode() from a Java float[] to a Java float[].
                    backend.encode(images);
                    int e2eIters = 3;
                    long s0 = System.nanoTime();
                    for (int i = 0; i < e2eIters; i++) {
                        backend.encode(images);
                    }
                    double e2e = (System.nanoTime() - s0) / 1e6 / e2eIters;
                    System.out.printf(Locale.ROOT,
                            "batch %2d: %8.2f ms GPU (%7.1f img/s), %8.2f ms end to end (%7.1f img/s); pool %.2f GiB,"
                                    + " cuMemGetInfo delta %.2f GiB%n",
                            batch, ms, 1000 * batch / ms, e2e, 1000 * batch / e2e, backend.poolBytes() / 1073741824.0,
                            delta / 1073741824.0);
                    out.printf(Locale.ROOT, "encoder\t%d\t%.4f\t%.4f\t%d\t%d%n", batch, ms, e2e, backend.poolBytes(), delta);
                    // The same backend without the CUDA graph.
                    double eager = backend.timeForward(batch, iters, false);
                    System.out.printf(Locale.ROOT, "  variants: graph %s %.2f ms; eager launches %.2f ms%n",
                            backend.usesGraphs() ? "on" : "off", ms, eager);
                    out.printf(Locale.ROOT, "variant\t%d\teager launches (no CUDA graph)\t%.4f%n", batch, eager);
                    Map<String, Double> prof = backend.profileForward(batch, 2);
                    for (Map.Entry<String, Double> en : prof.entrySet()) {
                        System.out.printf(Locale.ROOT, "  %-22s %8.3f ms%n", en.getKey(), en.getValue());
                        out.printf(Locale.ROOT, "profile\t%d\t%s\t%.4f%n", batch, en.getKey(), en.getValue());
                    }
                    out.flush();
                }
            }
        }
    }

    /** Removes {@code name VALUE} from {@code args} and returns VALUE, or {@code fallback} when absent. */
    private static String option(java.util.List<String> args, String name, String fallback) {
        int i = args.indexOf(name);
        if (i < 0) {
            return fallback;
        }
        if (i + 1 >= args.size()) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        String v = args.remove(i + 1);
        args.remove(i);
        return v;
    }

    static Tensor random(int batch, int s, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] v = new float[batch * 3 * s * s];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (r.nextDouble() * 4 - 2);
        }
        return new Tensor(v, batch, 3, s, s);
    }
}
