package io.samstream.bench;

import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaGraph;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.LaunchTimer;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.cuda.sam2.CudaMemoryAttention;
import io.samstream.gpu.cuda.sam2.CudaMemoryEncoder;
import io.samstream.gpu.cuda.sam2.CudaSam2ImageEncoder;
import io.samstream.gpu.cuda.sam2.CudaSam2MaskDecoder;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Shapes;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.IntConsumer;

/**
 * SAM 2.1's CUDA model parts at a release's shapes (random weights, input 1024): the image encoder (Hiera + FPN +
 * conv_s0 / conv_s1) per batch of frames, the memory attention per batch of objects conditioned on a full bank (the
 * conditioning frame + 6 previous frames, 16 object pointers: 7 x 4096 + 64 memory tokens), the memory encoder per
 * batch of objects, the mask decoder per batch of tracked objects (no prompt, three masks, the choice and the pointer on
 * the device). GPU ms per pass between CUDA events over back-to-back passes, the median of repeats: launched
 * kernel by kernel from Java, and replayed as a captured CUDA graph (what CudaSam2Offload runs).
 *
 * <pre>java -cp ... io.samstream.bench.Sam2PartsBench OUT.tsv [--models hiera_tiny,hiera_base_plus] [--batches 1,8]
 *      [--repeats 7] [--profile "image encoder,memory attention"]</pre>
 *
 * {@code --profile} adds, for the parts whose names start with one of the given prefixes, #profile rows: where one
 * launched pass's GPU time goes, kernel by kernel ({@link LaunchTimer}).
 *
 * bench/sam2_torch.py measures Meta's modules (and its SAM2VideoPredictor) in bf16 on the same GPU.
 */
public final class Sam2PartsBench {
    private static final int PASSES = 10;

    private Sam2PartsBench() {}

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: Sam2PartsBench OUT.tsv [--models a,b] [--batches 1,8] [--repeats 7] [--profile PART,...]");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        List<String> models = List.of("hiera_tiny", "hiera_base_plus");
        int[] batches = {1, 8};
        int repeats = 7;
        List<String> profile = List.of();
        for (int i = 1; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--models" -> models = List.of(args[i + 1].split(","));
                case "--batches" -> batches = Arrays.stream(args[i + 1].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--repeats" -> repeats = Integer.parseInt(args[i + 1]);
                case "--profile" -> profile = List.of(args[i + 1].split(","));
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        List<String> rows = new ArrayList<>();
        rows.add("model\tpart\tbatch\tms_per_pass_median\tms_per_item\tms_all");
        try (CudaContext ctx = CudaContext.open(0)) {
            rows.add("#meta\tgpu\t" + ctx.info().describe());
            CudaKernels kernels = new CudaKernels(ctx);
            for (String name : models) {
                Sam2Config config = Sam2Shapes.release(name);
                for (int batch : batches) {
                    rows.addAll(measure(ctx, kernels, name, config, batch, repeats, profile));
                    Files.write(out, rows);
                }
            }
            kernels.close();
        }
        Files.write(out, rows);
        System.out.println(String.join("\n", rows));
    }

    private static List<String> measure(CudaContext ctx, CudaKernels kernels, String name, Sam2Config config,
                                        int batch, int repeats, List<String> profile) {
        List<String> rows = new ArrayList<>();
        int f = config.featureSize();
        int tokens = f * f;
        int pointerTokens = Sam2Config.MAX_OBJECT_POINTERS * (config.hidden() / config.memDim());
        int memory = config.numMaskmem() * tokens + pointerTokens;
        try (DeviceMemoryPool pool = new DeviceMemoryPool(ctx, 24L << 30);
             CudaStream stream = new CudaStream(ctx);
             PinnedBuffer staging = new PinnedBuffer(ctx, 64L << 20, "staging")) {
            CudaSam2ImageEncoder image = new CudaSam2ImageEncoder(Sam2Shapes.random(Sam2Shapes.imageEncoder(config), 1),
                    config, batch, kernels, stream, pool, staging);
            CudaMemoryAttention attention = new CudaMemoryAttention(
                    Sam2Shapes.random(Sam2Shapes.memoryAttention(config), 2), config, batch, memory, kernels, stream,
                    pool, staging);
            CudaMemoryEncoder encoder = new CudaMemoryEncoder(Sam2Shapes.random(Sam2Shapes.memoryEncoder(config), 3),
                    config, batch, kernels, stream, pool, staging);
            CudaSam2MaskDecoder decoder = new CudaSam2MaskDecoder(Sam2Shapes.random(Sam2Shapes.maskDecoder(config), 4),
                    config, batch, kernels, stream, pool, staging);
            // inputs: zeros are as fast as any values for these kernels except the softmax; fill the memory with a
            // pattern so that attention is not degenerate
            DeviceBuffer curr = pool.allocateBf16((long) batch * tokens * config.hidden(), "curr");
            DeviceBuffer mem = pool.allocateBf16((long) batch * memory * config.memDim(), "memory");
            DeviceBuffer memPos = pool.allocateBf16((long) batch * memory * config.memDim(), "memory pos");
            DeviceBuffer logits = pool.allocate((long) batch * config.lowResSize() * config.lowResSize() * 4, "logits");
            stream.fill16(curr, (short) 0x3f80);
            stream.fill16(mem, (short) 0x3e00);
            stream.fill16(memPos, (short) 0x3d00);
            stream.fill16(image.input().slice(0, image.input().bytes(), "input"), (short) 0x3f00);
            stream.fill16(logits, (short) 0x4000);
            DeviceBuffer scores = pool.allocate((long) batch * 4, "object scores");
            stream.fill16(scores, (short) 0x3f80);    // fp32 0x3f803f80 > 0: every object present
            boolean[] flags = new boolean[batch];
            DeviceBuffer frameOfSet = pool.allocate((long) batch * 4, "frame of each set");
            stream.fill16(frameOfSet, (short) 0);      // every set reads frame 0's high-resolution features
            decoder.stageNoPrompts(batch);
            Runnable imagePass = () -> image.forward(batch);
            Runnable attentionPass = () -> attention.forward(batch, curr, mem, memPos, memory, pointerTokens);
            Runnable encoderPass = () -> encoder.forward(batch, image.top(), logits, flags, scores);
            Runnable decoderPass = () -> decoder.forward(batch, 2, true, attention.output(), image.s0(), image.s1(),
                    frameOfSet);
            String[] parts = {"image encoder", "memory attention (7 memories + 16 pointers)", "memory encoder",
                "mask decoder (tracking: no prompt, 3 masks)"};
            Runnable[] passes = {imagePass, attentionPass, encoderPass, decoderPass};
            for (int p = 0; p < parts.length; p++) {
                Runnable pass = passes[p];
                rows.add(row(name, parts[p], batch, time(ctx, stream, repeats, i -> pass.run())));
                if (profile.stream().anyMatch(parts[p]::startsWith)) {
                    rows.addAll(profile(ctx, kernels, stream, name, parts[p], batch, pass));
                }
                try (CudaGraph graph = CudaGraph.capture(stream, pass, parts[p])) {
                    rows.add(row(name, parts[p] + ", CUDA graph", batch,
                            time(ctx, stream, repeats, i -> graph.launch(stream))));
                }
            }
            rows.addAll(attentionKernels(ctx, kernels, pool, stream, staging, name, batch, tokens, memory, repeats));
            rows.add(String.format(Locale.ROOT, "#meta\t%s batch %d\tdevice pool peak %.1f MB", name, batch,
                    pool.peak() / 1e6));
            decoder.close();
        }
        return rows;
    }

    /**
     * The memory attention's cross-attention alone (one 256-wide head, {@code tokens} queries over {@code memory} keys
     * per object, split keys where the launcher splits them) on each attention kernel the GPU has: sdpa.cuh's mma.sync
     * kernel, and on compute capability 9.0 sdpa_sm90.cuh's wgmma kernel; a #meta row gives each one's TFLOP/s.
     */
    private static List<String> attentionKernels(CudaContext ctx, CudaKernels kernels, DeviceMemoryPool pool,
                                                 CudaStream stream, PinnedBuffer staging, String name, int batch, int tokens, int memory,
                                                 int repeats) {
        int hd = 256;
        List<String> rows = new ArrayList<>();
        DeviceBuffer q = pool.allocateBf16((long) batch * tokens * hd, "sdpa q");
        DeviceBuffer k = pool.allocateBf16((long) batch * memory * hd, "sdpa k");
        DeviceBuffer v = pool.allocateBf16((long) batch * memory * hd, "sdpa v");
        DeviceBuffer o = pool.allocateBf16((long) batch * tokens * hd, "sdpa o");
        DeviceBuffer scratch = pool.allocate(Sam2Kernels.splitScratchBytes(batch, 1, tokens, hd, Sam2Kernels.MAX_SPLITS),
                "sdpa split scratch");
        // Random values (a constant would make every softmax row flat).
        randomize(stream, staging, q, 1);
        randomize(stream, staging, k, 2);
        randomize(stream, staging, v, 3);
        Sam2Kernels ops = Sam2Kernels.of(kernels);
        double flop = 4.0 * batch * tokens * (double) memory * hd;
        for (boolean hopper : ops.hopperSdpa(hd) ? new boolean[] {false, true} : new boolean[] {false}) {
            String kernel = hopper ? "wgmma (sdpa_sm90)" : "mma.sync (sdpa)";
            String part = "attention kernel, hd 256, " + tokens + " x " + memory + " keys: " + kernel;
            double[] ms = time(ctx, stream, repeats, i -> ops.sdpa(stream, new Sam2Kernels.Rows(q, hd, (long) tokens * hd),
                    new Sam2Kernels.Rows(k, hd, (long) memory * hd), new Sam2Kernels.Rows(v, hd, (long) memory * hd),
                    new Sam2Kernels.Rows(o, hd, (long) tokens * hd), batch, tokens, memory, 1, hd,
                    (float) (1 / Math.sqrt(hd)), scratch, hopper));
            rows.add(row(name, part, batch, ms));
            double[] sorted = ms.clone();
            Arrays.sort(sorted);
            rows.add(String.format(Locale.ROOT, "#meta\t%s batch %d\t%s: %.0f TFLOP/s", name, batch, kernel,
                    flop / (sorted[sorted.length / 2] * 1e-3) / 1e12));
        }
        return rows;
    }

    /**
     * Where one launched pass's GPU time goes: per kernel, its launches and total ms (an event pair around each
     * launch: the total runs a little above the pass's time), biggest first, as #profile rows.
     */
    private static List<String> profile(CudaContext ctx, CudaKernels kernels, CudaStream stream, String model,
                                        String part, int batch, Runnable pass) {
        List<String> rows = new ArrayList<>();
        try (LaunchTimer timer = new LaunchTimer(ctx)) {
            kernels.timeLaunches(timer);
            try {
                pass.run();
                timer.drain();   // the first pass warms the events up
                timer.hold(kernels, stream, 100);   // the pass queues up behind it: each pair times its kernel alone
                pass.run();
                Map<String, double[]> times = timer.drain();
                double total = times.values().stream().mapToDouble(t -> t[1]).sum();
                times.entrySet().stream().sorted((a, b) -> Double.compare(b.getValue()[1], a.getValue()[1]))
                        .forEach(e -> rows.add(String.format(Locale.ROOT, "#profile\t%s\t%s\t%d\t%s\t%d\t%.3f\t%.1f%%",
                                model, part, batch, e.getKey(), (int) e.getValue()[0], e.getValue()[1],
                                100 * e.getValue()[1] / total)));
            } finally {
                kernels.timeLaunches(null);
            }
        }
        return rows;
    }

    /** Fills a bf16 buffer with Gaussian values: one staging-sized block of them, repeated. */
    private static void randomize(CudaStream stream, PinnedBuffer staging, DeviceBuffer b, long seed) {
        Random rnd = new Random(seed);
        int block = (int) Math.min(staging.bytes(), b.bytes()) / 2;
        float[] values = new float[block];
        for (int i = 0; i < block; i++) {
            values[i] = (float) rnd.nextGaussian();
        }
        staging.putBf16(0, values);
        for (long at = 0; at < b.bytes(); at += 2L * block) {
            stream.upload(staging, 0, b, at, Math.min(2L * block, b.bytes() - at));
        }
        stream.synchronize();
    }

    /** ms per pass of each repeat: PASSES back-to-back passes between two events, after two warm-up passes. */
    private static double[] time(CudaContext ctx, CudaStream stream, int repeats, IntConsumer pass) {
        pass.accept(0);
        pass.accept(1);
        stream.synchronize();
        double[] ms = new double[repeats];
        try (CudaEvent start = new CudaEvent(ctx, true); CudaEvent end = new CudaEvent(ctx, true)) {
            for (int r = 0; r < repeats; r++) {
                stream.record(start);
                for (int i = 0; i < PASSES; i++) {
                    pass.accept(i);
                }
                stream.record(end);
                end.synchronize();
                ms[r] = CudaEvent.elapsedMillis(start, end) / PASSES;
            }
        }
        return ms;
    }

    private static String row(String model, String part, int batch, double[] ms) {
        double[] sorted = ms.clone();
        Arrays.sort(sorted);
        double median = sorted[sorted.length / 2];
        StringBuilder all = new StringBuilder();
        for (double m : ms) {
            all.append(all.length() == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.3f", m));
        }
        return String.format(Locale.ROOT, "%s\t%s\t%d\t%.3f\t%.3f\t%s", model, part, batch, median, median / batch, all);
    }
}
