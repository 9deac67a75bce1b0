package io.samstream.bench;

import io.samstream.config.ModelPrecision;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels;
import io.samstream.gpu.cuda.sam3.CudaSam3;
import io.samstream.gpu.cuda.sam3.CudaSam3Decoder;
import io.samstream.gpu.cuda.sam3.CudaSam3FusionEncoder;
import io.samstream.gpu.cuda.sam3.CudaSam3MaskHead;
import io.samstream.gpu.cuda.sam3.CudaSam3Neck;
import io.samstream.gpu.cuda.sam3.CudaSam3Vit;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Prompt;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3Decoder;
import io.samstream.gpu.sam3.Sam3MaskHead;
import io.samstream.gpu.sam3.Sam3Neck;
import io.samstream.gpu.sam3.VisionFeatures;
import io.samstream.gpu.sam3.Sam3Shapes;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import java.util.function.IntConsumer;

/**
 * SAM 3's GPU parts at the release's shapes (random weights): the ViT trunk (input 1008, 32 blocks), one neck (the
 * trunk's 72x72 map to levels of 288², 144² and 72² at width 256; a video frame runs two, the detector's and the
 * tracker's), the fusion encoder (6 layers at width 256 over 72x72 tokens, attending to {@code --prompt} valid
 * prompt tokens, 33 by default: a phrase of 32 and the geometry's class token), the DETR decoder (6 layers, 200
 * queries) and the mask head (5 queries' masks at 288²). GPU ms per image between CUDA events over back-to-back
 * passes of one image, the median of repeats; for the decoder and the mask head also the wall time of a whole call
 * through the host seam (the inputs staged as bf16, the outputs brought back), what a frame pays today. Kernel by
 * kernel from Java (no graph). Where the GPU runs the e4m3 GEMM (compute capability 9.0), the trunk is timed a
 * second time with its blocks' Linears in FP8 ({@code samstream.model.precision = fp8}), the same weights.
 *
 * <pre>java -cp ... io.samstream.bench.Sam3VitBench [--repeats 7] [--passes 5] [--prompt 33]</pre>
 */
public final class Sam3VitBench {
    private Sam3VitBench() {}

    public static void main(String[] args) {
        int repeats = 7, passes = 5, prompt = 33;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--repeats" -> repeats = Integer.parseInt(args[i + 1]);
                case "--passes" -> passes = Integer.parseInt(args[i + 1]);
                case "--prompt" -> prompt = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (usage: Sam3VitBench [--repeats 7] [--passes 5] [--prompt 33])");
            }
        }
        Sam3Config.Vision vision = Sam3ConfigInference.RELEASE_VIT;
        Sam3Config.Detector detector = Sam3ConfigInference.RELEASE_DETECTOR;
        int tokens = vision.grid() * vision.grid(), maxPrompt = 32 + CudaSam3.MAX_EXEMPLAR_BOXES + 1;
        if (prompt < 1 || prompt > maxPrompt) {
            throw new IllegalArgumentException("--prompt " + prompt + ": 1 to " + maxPrompt + " valid prompt tokens");
        }
        try (CudaContext ctx = CudaContext.open(0);
             DeviceMemoryPool pool = new DeviceMemoryPool(ctx, 8L << 30);
             CudaStream stream = new CudaStream(ctx);
             PinnedBuffer staging = new PinnedBuffer(ctx, 64L << 20, "staging")) {
            CudaKernels kernels = new CudaKernels(ctx);
            StateDict trunkWeights = Sam2Shapes.random(Sam3Shapes.trunkShapes(vision), 1);
            CudaSam3Vit vit = new CudaSam3Vit(trunkWeights, vision, 1, ModelPrecision.BF16, kernels, stream, pool,
                    staging);
            stream.fill16(vit.input(), (short) 0x3f00);
            double[] vitMs = time(ctx, stream, repeats, passes, b -> vit.forward(1));
            double[] vitFp8Ms = null;
            if (Fp8GemmKernels.of(kernels).gemmRuns()) {
                long mark = pool.mark();
                CudaSam3Vit vit8 = new CudaSam3Vit(trunkWeights, vision, 1, ModelPrecision.FP8, kernels, stream, pool,
                        staging);
                stream.fill16(vit8.input(), (short) 0x3f00);
                vitFp8Ms = time(ctx, stream, repeats, passes, b -> vit8.forward(1));
                pool.release(mark);
            }

            Sam3Config release = new Sam3Config(vision, new Sam3Config.Text(49408, 32, 1024, 24, 16, 4096, 512),
                    detector);
            StateDict neckWeights = Sam2Shapes.random(Sam3Shapes.detectorPart(release, Sam3Neck.DETECTOR), 4);
            CudaSam3Neck neck = new CudaSam3Neck(neckWeights, Sam3Neck.DETECTOR, release, kernels,
                    stream, new DeviceWeights(pool, stream, staging), CudaSam3Neck.Workspace.allocate(pool, release));
            double[] neckMs = time(ctx, stream, repeats, passes, b -> neck.forward(vit.output()));

            CudaSam3FusionEncoder fusion = new CudaSam3FusionEncoder(Sam2Shapes.random(
                    Sam3Shapes.fusionShapes(detector), 2), detector, tokens, maxPrompt, kernels, stream, pool, staging);
            Random rnd = new Random(3);
            StagedCopy.uploadBf16(stream, staging, gaussian(rnd, (long) tokens * detector.dModel()), fusion.input());
            StagedCopy.uploadBf16(stream, staging, gaussian(rnd, (long) tokens * detector.dModel()),
                    fusion.position());
            StagedCopy.uploadBf16(stream, staging, gaussian(rnd, (long) maxPrompt * detector.dModel()),
                    fusion.promptRows());
            int valid = prompt;
            double[] fusionMs = time(ctx, stream, repeats, passes, b -> fusion.forward(valid));

            int d = detector.dModel(), g = vision.grid(), n = 5;
            float[] memory = gaussian(rnd, (long) tokens * d), pos = gaussian(rnd, (long) tokens * d);
            Prompt phrase = new Prompt(gaussian(rnd, (long) prompt * d), new boolean[prompt]);
            StateDict decoderWeights = Sam2Shapes.random(Sam3Shapes.detectorPart(release, Sam3Decoder.PREFIX), 5);
            CudaSam3Decoder decoder = new CudaSam3Decoder(decoderWeights, detector, g, maxPrompt, kernels, stream, pool,
                    staging);
            double[] decoderCallMs = wall(repeats, () -> decoder.forward(FeatureMap.of(memory), pos, g, phrase));
            double[] decoderMs = time(ctx, stream, repeats, passes, b -> decoder.forward(valid));

            StateDict headWeights = Sam2Shapes.random(Sam3Shapes.detectorPart(release, Sam3MaskHead.PREFIX), 6);
            DeviceBuffer rows = pool.allocateBf16(CudaSam3MaskHead.rowsValues(release), "sam3 mask head rows");
            CudaSam3MaskHead head = new CudaSam3MaskHead(headWeights, release, maxPrompt, detector.queries(), kernels,
                    stream, pool, staging, rows);
            VisionFeatures image = new VisionFeatures(g, new float[0], new float[][] {gaussian(rnd, 16L * tokens * d),
                    gaussian(rnd, 4L * tokens * d), gaussian(rnd, (long) tokens * d)}, pos);
            float[] embeddings = gaussian(rnd, (long) n * d);
            double[] headCallMs = wall(repeats, () -> head.masks(FeatureMap.of(memory), image, phrase, embeddings,
                    n));
            double[] headMs = time(ctx, stream, repeats, passes, b -> head.forward(valid, 8));

            System.out.printf(Locale.ROOT, "gpu\t%s%n", ctx.info().describe());
            print("sam3 vit " + vision, vitMs);
            if (vitFp8Ms != null) {
                print("sam3 vit fp8 (block Linears e4m3)", vitFp8Ms);
            }
            print("sam3 neck (one of the two a video frame runs)", neckMs);
            print("sam3 fusion encoder " + detector.encoderLayers() + " layers, " + tokens + " tokens, " + prompt
                    + " prompt tokens", fusionMs);
            print("sam3 decoder " + detector.decoderLayers() + " layers, " + detector.queries() + " queries",
                    decoderMs);
            print("sam3 decoder, the whole call (wall)", decoderCallMs);
            print("sam3 mask head, " + n + " queries", headMs);
            print("sam3 mask head, the whole call (wall)", headCallMs);
            System.out.printf(Locale.ROOT, "device pool peak\t%.1f MB%n", pool.peak() / 1e6);
            kernels.close();
        }
    }

    /** Wall ms of {@code call} (synchronous) over {@code repeats} runs after one warm-up, sorted. */
    private static double[] wall(int repeats, Runnable call) {
        call.run();
        double[] ms = new double[repeats];
        for (int r = 0; r < repeats; r++) {
            long t0 = System.nanoTime();
            call.run();
            ms[r] = (System.nanoTime() - t0) / 1e6;
        }
        Arrays.sort(ms);
        return ms;
    }

    /** GPU ms per pass of {@code pass} over {@code repeats} runs of {@code passes} passes, after one warm-up, sorted. */
    private static double[] time(CudaContext ctx, CudaStream stream, int repeats, int passes, IntConsumer pass) {
        pass.accept(0);
        stream.synchronize();
        double[] ms = new double[repeats];
        try (CudaEvent start = new CudaEvent(ctx, true); CudaEvent end = new CudaEvent(ctx, true)) {
            for (int r = 0; r < repeats; r++) {
                stream.record(start);
                for (int i = 0; i < passes; i++) {
                    pass.accept(i);
                }
                stream.record(end);
                end.synchronize();
                ms[r] = CudaEvent.elapsedMillis(start, end) / passes;
            }
        }
        Arrays.sort(ms);
        return ms;
    }

    private static void print(String what, double[] ms) {
        System.out.printf(Locale.ROOT, "%s%nms_per_image_median\t%.2f\tmin\t%.2f\tmax\t%.2f%n", what, ms[ms.length / 2],
                ms[0], ms[ms.length - 1]);
    }

    private static float[] gaussian(Random rnd, long n) {
        float[] v = new float[Math.toIntExact(n)];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) rnd.nextGaussian();
        }
        return v;
    }
}
