package io.samstream.bench;

import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.GpuFramePreprocessor;
import io.samstream.gpu.cuda.GpuMaskPostprocessor;
import io.samstream.gpu.cuda.ImageOpsKernels;
import io.samstream.gpu.image.FramePreprocessor;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.MaskPostprocessor;
import io.samstream.gpu.image.ResizeLongestSide;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.mask.CocoRle;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * SAM's pre- and post-processing at 1080p, CPU against GPU, in wall-clock milliseconds as the engine sees
 * them (host staging, uploads, kernels, downloads and the COCO RLE string included):
 * <ul>
 *   <li>pre-processing of B 1920x1080 frames to the fp32 [B, 3, 1024, 1024] encoder input: the CPU
 *       ({@link FramePreprocessor}, one thread) and the GPU ({@link GpuFramePreprocessor}, into device
 *       memory, until the stream is done);</li>
 *   <li>post-processing of N 256x256 mask logits to 1080p masks with stability, box, area and the RLE
 *       string: the unfused path ("cpu former" rows: upscaled logits, threshold, CocoRle of the boolean mask,
 *       a stability pass), the CPU default ({@link MaskPostprocessor#summarize}) and the GPU
 *       ({@link GpuMaskPostprocessor}).</li>
 * </ul>
 * Median of the repeats after one warm-up.
 *
 * <pre>java -cp ... io.samstream.bench.ImageOpsBench OUT.tsv [repeats]</pre>
 */
public final class ImageOpsBench {
    private static final int S = 1024;
    private final List<String> rows = new ArrayList<>();
    private final int repeats;

    private ImageOpsBench(int repeats) {
        this.repeats = repeats;
    }

    public static void main(String[] args) throws IOException {
        Path out = Path.of(args.length > 0 ? args[0] : "imageops-bench.tsv");
        int repeats = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        ImageOpsBench b = new ImageOpsBench(repeats);
        try (CudaContext ctx = CudaContext.open(0); CudaKernels kernels = new CudaKernels(ctx)) {
            ImageOpsKernels ops = new ImageOpsKernels(kernels);
            b.preprocessing(ctx, ops);
            b.postprocessing(ctx, ops);
            try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out))) {
                w.println("device\t" + ctx.info().describe());
                b.rows.forEach(w::println);
            }
        }
        System.out.println("wrote " + out);
    }

    private double median(Runnable r) {
        r.run();
        double[] t = new double[repeats];
        for (int i = 0; i < repeats; i++) {
            long start = System.nanoTime();
            r.run();
            t[i] = (System.nanoTime() - start) / 1e6;
        }
        Arrays.sort(t);
        return t[repeats / 2];
    }

    private void report(String op, String variant, String shape, double ms, int items, String unit) {
        String row = String.format(Locale.ROOT, "%s\t%s\t%s\t%.3f\t%.3f ms/%s", op, variant, shape, ms, ms / items, unit);
        rows.add(row);
        System.out.println(row);
    }

    private void preprocessing(CudaContext ctx, ImageOpsKernels ops) {
        Random rnd = new Random(1);
        byte[] rgb = new byte[1920 * 1080 * 3];
        rnd.nextBytes(rgb);
        RgbImage frame = new RgbImage(1920, 1080, rgb);
        FramePreprocessor cpu = new FramePreprocessor(S);
        try (CudaStream stream = new CudaStream(ctx);
                DeviceMemoryPool pool = new DeviceMemoryPool(ctx, 32L * 3 * S * S * 4 + (1 << 20));
                GpuFramePreprocessor gpu = new GpuFramePreprocessor(ctx, ops, S)) {
            DeviceBuffer images = pool.allocate(32L * 3 * S * S * 4, "images");
            for (int batch : new int[] {1, 8, 32}) {
                List<RgbImage> frames = Collections.nCopies(batch, frame);
                String shape = batch + " x 1920x1080 -> [" + batch + ", 3, 1024, 1024] fp32";
                if (batch <= 8) {
                    report("preprocess", "cpu (FramePreprocessor, 1 thread)", shape, median(() -> cpu.batch(frames)), batch,
                            "frame");
                }
                report("preprocess", "gpu (GpuFramePreprocessor)", shape, median(() -> {
                    gpu.enqueue(stream, frames, images);
                    stream.synchronize();
                }), batch, "frame");
            }
        }
    }

    private static Tensor logits(int n, long seed) {
        Random rnd = new Random(seed);
        float[] v = new float[n * 256 * 256];
        for (int m = 0; m < n; m++) {
            double cx = rnd.nextDouble() * 256, cy = rnd.nextDouble() * 256, r = 10 + rnd.nextDouble() * 60;
            for (int y = 0; y < 256; y++) {
                for (int x = 0; x < 256; x++) {
                    v[(m * 256 + y) * 256 + x] = (float) ((r - Math.hypot(x - cx, y - cy)) * 0.3 + rnd.nextGaussian() * 0.2);
                }
            }
        }
        return new Tensor(v, n, 256, 256);
    }

    /** The engine's post-processing before MaskSummary: what Segmenter.decodeObject did per object. */
    private static String formerPath(MaskPostprocessor post, Tensor lowRes, ImageSize resized, ImageSize original) {
        StringBuilder sink = new StringBuilder();
        int plane = 256 * 256;
        for (int m = 0; m < lowRes.size() / plane; m++) {
            Tensor one = new Tensor(Arrays.copyOfRange(lowRes.data(), m * plane, (m + 1) * plane), 1, 256, 256);
            float[] up = post.upscaleLogits(one, resized, original).data();
            boolean[] mask = MaskPostprocessor.threshold(up, 0, up.length);
            CocoRle rle = CocoRle.ofMask(mask, original.height(), original.width());
            long inner = 0;
            long outer = 0;
            for (float v : up) {
                inner += v > 1f ? 1 : 0;
                outer += v > -1f ? 1 : 0;
            }
            sink.append(rle.countsString().length()).append(rle.boundingBoxCorners()[0]).append(inner + outer);
        }
        return sink.toString();
    }

    private static int rleStrings(List<MaskSummary> masks) {
        int n = 0;
        for (MaskSummary s : masks) {
            n += s.rle().countsString().length() + s.box()[0];
        }
        return n;
    }

    private void postprocessing(CudaContext ctx, ImageOpsKernels ops) {
        ImageSize original = new ImageSize(1080, 1920);
        ImageSize resized = ResizeLongestSide.preprocessShape(1080, 1920, S);
        MaskPostprocessor cpu = new MaskPostprocessor(S);
        try (GpuMaskPostprocessor gpu = new GpuMaskPostprocessor(ctx, ops, S)) {
            for (int n : new int[] {1, 16, 64}) {
                Tensor lowRes = logits(n, n);
                String shape = n + " x 256x256 -> 1080x1920 masks + RLE strings";
                if (n <= 16) {
                    report("postprocess", "cpu former (upscaleLogits + threshold + CocoRle.ofMask + stability)", shape,
                            median(() -> formerPath(cpu, lowRes, resized, original)), n, "mask");
                    report("postprocess", "cpu default (MaskPostprocessor.summarize + rle)", shape,
                            median(() -> rleStrings(cpu.summarize(lowRes, resized, original))), n, "mask");
                }
                report("postprocess", "gpu (GpuMaskPostprocessor, host logits) + rle", shape,
                        median(() -> rleStrings(gpu.run(lowRes, resized, original))), n, "mask");
                report("postprocess", "gpu (GpuMaskPostprocessor, host logits), no rle", shape,
                        median(() -> gpu.run(lowRes, resized, original)), n, "mask");
            }
        }
    }
}
