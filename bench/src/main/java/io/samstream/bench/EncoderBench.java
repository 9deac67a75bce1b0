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

import io.samstream.config.ModelSparsity;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sparse.SparseEncoder;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaSamBackend;
import io.samstream.gpu.model.SamCheckpointSchema;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;

/**
 * The whole vit_b image encoder of {@link CudaSamBackend} (random weights in the official shapes, 1024 px)
 * at batch 1, 8 and 32 (or the batches given): GPU ms per batch between CUDA events over back-to-back
 * passes on a staged input, end-to-end {@code encode()} time (host copies and transfers included), the
 * device pool's size and the cuMemGetInfo drop when the backend opened, and where the GPU time goes per
 * step. One backend per batch, sized for that batch (so its memory is that batch's).
 *
 * <pre>java -cp ... io.samstream.bench.EncoderBench [--model vit_b|vit_l|vit_h] [--sparsity 2:4 [--sparse-layers all|mlp]]
 *      OUT.tsv [batch...]</pre>
 *
 * With {@code --sparsity 2:4} the random weights are pruned first and the pruned Linears run on the sparse
 * GEMM (the TSV's {@code meta sparsity} line says which).
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
            out.println("meta\tmodel\t" + modelName);
            out.println("meta\tgemmPipeline\t" + CudaKernels.gemmPipelineName());
            out.println("meta\tattentionWgmma\t" + CudaKernels.attentionWgmmaEnabled());
            out.println("meta\twindowAttentionWgmma\t" + CudaKernels.windowAttentionWgmmaEnabled());
            out.println("meta\twindowAttentionHalves\t" + CudaKernels.windowAttentionHalvesEnabled());
            for (int batch : batches) {
                ctx.bind();
                long before = freeBytes();
                try (CudaSamBackend backend = new CudaSamBackend(weights, config, batch, 4, sparsity)) {
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
                    // The same backend without the CUDA graph, and without the Hopper GEMM too (the previous path).
                    double eager = backend.timeForward(batch, iters, false);
                    String wgmma = System.getProperty(CudaKernels.WGMMA_PROPERTY);
                    System.setProperty(CudaKernels.WGMMA_PROPERTY, "false");
                    double old;
                    try {
                        backend.timeForward(batch, 1, false);
                        old = backend.timeForward(batch, iters, false);
                    } finally {
                        if (wgmma == null) {
                            System.clearProperty(CudaKernels.WGMMA_PROPERTY);
                        } else {
                            System.setProperty(CudaKernels.WGMMA_PROPERTY, wgmma);
                        }
                    }
                    System.out.printf(Locale.ROOT, "  variants: graph %s %.2f ms; eager launches %.2f ms; eager, mma.sync"
                            + " GEMMs %.2f ms%n", backend.usesGraphs() ? "on" : "off", ms, eager, old);
                    out.printf(Locale.ROOT, "variant\t%d\teager launches (no CUDA graph)\t%.4f%n", batch, eager);
                    out.printf(Locale.ROOT, "variant\t%d\teager launches, mma.sync GEMMs (previous path)\t%.4f%n", batch, old);
                    // Eager with each Hopper GEMM pipeline and each global-attention kernel (same backend, same process):
                    // one change at a time against the rest of this run's configuration.
                    for (String pipeline : VARIANT_PIPELINES.split(",")) {
                        double t = eagerWith(backend, batch, iters, CudaKernels.GEMM_PIPELINE_PROPERTY, pipeline.trim());
                        System.out.printf(Locale.ROOT, "  eager, Hopper GEMM pipeline %s: %.2f ms (%.1f img/s)%n",
                                pipeline.trim(), t, 1000 * batch / t);
                        out.printf(Locale.ROOT, "variant\t%d\teager launches, GEMM pipeline %s\t%.4f%n", batch,
                                pipeline.trim(), t);
                    }
                    for (String[] attention : !ATTENTION_VARIANTS ? new String[0][] : new String[][] {
                        {CudaKernels.ATTENTION_WGMMA_PROPERTY, "global"},
                        {CudaKernels.WINDOW_ATTENTION_WGMMA_PROPERTY, "windowed"}}) {
                        for (String wgmmaAttention : new String[] {"false", "true"}) {
                            double t = eagerWith(backend, batch, iters, attention[0], wgmmaAttention);
                            String kernel = wgmmaAttention.equals("true") ? "wgmma" : "mma.sync";
                            System.out.printf(Locale.ROOT, "  eager, %s attention on %s: %.2f ms (%.1f img/s)%n",
                                    attention[1], kernel, t, 1000 * batch / t);
                            out.printf(Locale.ROOT, "variant\t%d\teager launches, %s attention %s\t%.4f%n", batch,
                                    attention[1], kernel, t);
                        }
                    }
                    // Windowed attention on wgmma with a whole window and with half a window per CTA
                    // (CudaKernels.WINDOW_ATTENTION_HALVES_PROPERTY).
                    for (String halves : !ATTENTION_VARIANTS ? new String[0] : new String[] {"false", "true"}) {
                        double t = eagerWith(backend, batch, iters, CudaKernels.WINDOW_ATTENTION_WGMMA_PROPERTY, "true",
                                CudaKernels.WINDOW_ATTENTION_HALVES_PROPERTY, halves);
                        String kernel = halves.equals("true") ? "wgmma halves" : "wgmma whole windows";
                        System.out.printf(Locale.ROOT, "  eager, windowed attention on %s: %.2f ms (%.1f img/s)%n",
                                kernel, t, 1000 * batch / t);
                        out.printf(Locale.ROOT, "variant\t%d\teager launches, windowed attention %s\t%.4f%n", batch,
                                kernel, t);
                    }
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

    /**
     * The Hopper GEMM pipelines of the eager variant rows: {@code -Dsamstream.bench.pipelines=v1,v2,tma,tma2}
     * (default v1,v2: a pipeline that has not passed its GPU tests could take the whole run down with it).
     */
    private static final String VARIANT_PIPELINES = System.getProperty("samstream.bench.pipelines", "v1,v2");
    /** {@code -Dsamstream.bench.attentionVariants=false} leaves out the eager rows of both attention kernels. */
    private static final boolean ATTENTION_VARIANTS =
            Boolean.parseBoolean(System.getProperty("samstream.bench.attentionVariants", "true"));

    /** Eager forward time with the system property {@code key} set to {@code value} (restored after). */
    private static double eagerWith(CudaSamBackend backend, int batch, int iters, String key, String value) {
        String before = System.getProperty(key);
        System.setProperty(key, value);
        try {
            backend.timeForward(batch, 1, false);
            return backend.timeForward(batch, iters, false);
        } finally {
            if (before == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, before);
            }
        }
    }

    /** {@link #eagerWith(CudaSamBackend, int, int, String, String)} with a second property set as well. */
    private static double eagerWith(CudaSamBackend backend, int batch, int iters, String key, String value,
                                    String key2, String value2) {
        String before = System.getProperty(key);
        System.setProperty(key, value);
        try {
            return eagerWith(backend, batch, iters, key2, value2);
        } finally {
            if (before == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, before);
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
