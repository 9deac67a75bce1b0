package io.samstream.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.sam.CudaSamBackend;
import io.samstream.gpu.cuda.sam.CudaSamOptions;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;

/**
 * The GPU prompt encoder + mask decoder of {@link CudaSamBackend} at vit_b's shapes (random weights, a
 * 64 x 64 x 256 embedding): prompt sets per second at 1 and 64 sets per image, for
 * <ul>
 *   <li>"point": one foreground point per set, multimask (the automatic mask generator's grid);</li>
 *   <li>"box+mask": a box and the previous low-res logits as mask input, single mask (tracking);</li>
 * </ul>
 * each as the end-to-end {@code decodeBatch()} time (Java prompts and embedding in, Java logits out:
 * uploads and the download of the fp32 low-res logits included) and the GPU time between the decoder's
 * events (after the uploads, before the download); the same with the graph replay off ("no graph": every kernel
 * launched from Java), and where the GPU time goes at 64 sets. Then encoder / decoder overlap: N frames, each
 * encoded (batch 1) and decoded with 64 point prompts, once serialized on one thread and once with the
 * encoder on one thread and the decoder on another (their streams overlap on the GPU).
 *
 * <pre>java -cp ... io.samstream.bench.DecoderBench OUT.tsv</pre>
 *
 * bench/decoder_torch.py then times Meta's prompt encoder + mask decoder in bf16 eager and writes the table.
 */
public final class DecoderBench {
    private static final int MAX_SETS = 64;

    public static void main(String[] args) throws Exception {
        Path outPath = Path.of(args.length > 0 ? args[0] : "decoder-bench.tsv");
        int frames = args.length > 1 ? Integer.parseInt(args[1]) : 16;
        SamConfig config = EncoderBench.vitB();
        StateDict weights = EncoderBench.randomWeights(config, 1);
        Files.createDirectories(outPath.toAbsolutePath().getParent());
        int s = config.imageSize(), c = config.promptDim(), e = config.embeddingSize(), l = config.lowResSize();
        Tensor embedding = randomEmbedding(c, e, 3);
        try (CudaSamBackend backend = new CudaSamBackend(weights, config,
                CudaSamOptions.builder(1).decoderThreads(4).maxPromptSets(MAX_SETS).build());
             PrintWriter out = new PrintWriter(Files.newBufferedWriter(outPath))) {
            out.println("meta\tdevice\t" + backend.context().info().describe());
            out.println("meta\tdecoder_pool\t" + backend.maskDecoder().poolBytes());
            SplittableRandom r = new SplittableRandom(5);
            List<Prompt> points = new ArrayList<>(), boxMask = new ArrayList<>();
            Tensor mask = backend.decode(embedding, new Prompt(new float[][] {{s / 2f, s / 2f}}, new int[] {1}, null, null),
                    false).lowResLogits();
            for (int i = 0; i < MAX_SETS; i++) {
                points.add(new Prompt(new float[][] {{(float) r.nextDouble(0, s), (float) r.nextDouble(0, s)}},
                        new int[] {1}, null, null));
                float x0 = (float) r.nextDouble(0, s / 2.0), y0 = (float) r.nextDouble(0, s / 2.0);
                boxMask.add(new Prompt(null, null, new float[] {x0, y0, x0 + s / 4f, y0 + s / 4f}, mask));
            }
            for (String kind : new String[] {"point", "box+mask", "point (no graph)"}) {
                List<Prompt> all = kind.startsWith("point") ? points : boxMask;
                boolean multimask = kind.startsWith("point");
                backend.maskDecoder().useGraphs(!kind.endsWith("(no graph)"));
                for (int sets : new int[] {1, MAX_SETS}) {
                    List<Prompt> batch = all.subList(0, sets);
                    for (int i = 0; i < 3; i++) {
                        backend.decodeBatch(embedding, batch, multimask);   // warm-up
                    }
                    int iters = sets == 1 ? 200 : 30;
                    double[] wall = new double[iters], gpu = new double[iters], unpack = new double[iters];
                    for (int i = 0; i < iters; i++) {
                        long t0 = System.nanoTime();
                        List<DecoderOutput> o = backend.decodeBatch(embedding, batch, multimask);
                        wall[i] = (System.nanoTime() - t0) / 1e6;
                        gpu[i] = backend.maskDecoder().lastGpuMillis();
                        unpack[i] = backend.maskDecoder().lastUnpackMillis();
                        if (o.size() != sets || o.get(0).lowResLogits().dim(1) != l) {
                            throw new IllegalStateException("unexpected decoder output");
                        }
                    }
                    double w = median(wall), g = median(gpu);
                    System.out.printf(Locale.ROOT, "decoder %-16s %2d sets: %7.3f ms end to end (%8.1f sets/s), %7.3f ms GPU"
                            + " (%8.1f sets/s); copying the logits into Java arrays %.3f ms%n", kind, sets, w, 1000 * sets / w, g,
                            1000 * sets / g, median(unpack));
                    out.printf(Locale.ROOT, "decoder\t%s\t%d\t%.4f\t%.4f%n", kind, sets, w, g);
                    out.flush();
                }
            }
            backend.maskDecoder().useGraphs(true);
            Map<String, Double> prof = backend.maskDecoder().profile(embedding, points, true, 5);
            double total = prof.values().stream().mapToDouble(Double::doubleValue).sum();
            System.out.printf(Locale.ROOT, "profile, %d point sets (kernels launched one by one, events between): %.3f ms%n",
                    MAX_SETS, total);
            for (Map.Entry<String, Double> en : prof.entrySet()) {
                System.out.printf(Locale.ROOT, "  %-36s %8.3f ms%n", en.getKey(), en.getValue());
                out.printf(Locale.ROOT, "profile\t%d\t%s\t%.4f%n", MAX_SETS, en.getKey(), en.getValue());
            }
            out.flush();
            overlap(backend, config, embedding, points, frames, out);
        }
    }

    /** N frames of encode (1 image) + decode (64 point prompt sets): serialized vs two threads. */
    static void overlap(CudaSamBackend backend, SamConfig config, Tensor embedding, List<Prompt> prompts, int frames,
                        PrintWriter out) throws Exception {
        Tensor image = EncoderBench.random(1, config.imageSize(), 9);
        for (int i = 0; i < 2; i++) {
            backend.decodeBatch(backend.encode(image), prompts, true);
        }
        double encodeOnly = time(() -> {
            for (int i = 0; i < frames; i++) {
                backend.encode(image);
            }
        });
        double decodeOnly = time(() -> {
            for (int i = 0; i < frames; i++) {
                backend.decodeBatch(embedding, prompts, true);
            }
        });
        double serial = time(() -> {
            for (int i = 0; i < frames; i++) {
                backend.decodeBatch(backend.encode(image), prompts, true);
            }
        });
        double[] overlapped = new double[1];
        overlapped[0] = time(() -> {
            BlockingQueue<Tensor> queue = new ArrayBlockingQueue<>(2);
            Thread encoder = new Thread(() -> {
                try {
                    for (int i = 0; i < frames; i++) {
                        queue.put(backend.encode(image));
                    }
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }, "bench-encoder");
            encoder.start();
            try {
                for (int i = 0; i < frames; i++) {
                    Tensor emb = queue.poll(60, java.util.concurrent.TimeUnit.SECONDS);
                    if (emb == null) {
                        throw new IllegalStateException("the encoder thread produced nothing for 60 s");
                    }
                    backend.decodeBatch(emb, prompts, true);
                }
                encoder.join();
            } catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
        System.out.printf(Locale.ROOT, "overlap, %d frames (encode 1 image + decode %d sets each): encode only %.1f ms,"
                        + " decode only %.1f ms, serialized %.1f ms, two threads %.1f ms (%.2fx)%n", frames, prompts.size(),
                encodeOnly, decodeOnly, serial, overlapped[0], serial / overlapped[0]);
        out.printf(Locale.ROOT, "overlap\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f%n", frames, prompts.size(), encodeOnly, decodeOnly,
                serial, overlapped[0]);
        out.flush();
    }

    private static double time(Runnable r) {
        long t0 = System.nanoTime();
        r.run();
        return (System.nanoTime() - t0) / 1e6;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    static Tensor randomEmbedding(int c, int e, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] v = new float[c * e * e];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) r.nextGaussian() * 0.5f;
        }
        return new Tensor(v, 1, c, e, e);
    }
}
