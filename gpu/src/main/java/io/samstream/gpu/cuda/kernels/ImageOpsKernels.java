package io.samstream.gpu.cuda.kernels;

import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.image.HostYuvImage;
import io.samstream.gpu.image.PillowBilinearResize.Pass;
import java.util.Locale;
import jcuda.Pointer;

/**
 * Typed launches of the pre- and post-processing kernels of {@code image_ops.cuh}. Like {@link CudaKernels},
 * every method checks sizes and alignment before it queues anything, so a wrong call fails in Java with the
 * numbers named. Launches are asynchronous on the given stream.
 */
public final class ImageOpsKernels {
    static final String PILLOW_PASS = "samstream_pillow_pass_u8";
    static final String PILLOW_PASS_NORMALIZE = "samstream_pillow_pass_normalize_f32";
    static final String PILLOW_PASS_SCALE_NORMALIZE = "samstream_pillow_pass_scale_normalize_f32";
    static final String MASK_POSTPROCESS = "samstream_mask_postprocess";
    static final String YUV_TO_RGB = "samstream_yuv_to_rgb8";
    /** 32-bit words of statistics per mask (image_ops.cuh, MaskStat). */
    public static final int STAT_WORDS = 8;
    public static final int STAT_ABOVE_PLUS1 = 0, STAT_ABOVE_MINUS1 = 1, STAT_AREA = 2, STAT_W_MINUS_MINX = 3,
            STAT_H_MINUS_MINY = 4, STAT_MAXX_PLUS1 = 5, STAT_MAXY_PLUS1 = 6;
    private static final int THREADS = 256;

    private final CudaKernels kernels;
    private final CudaContext context;

    public ImageOpsKernels(CudaKernels kernels) {
        this.kernels = kernels;
        this.context = kernels.context();
        // Look the kernels up now: a fatbin without them fails here, not in the middle of a batch.
        kernels.function(PILLOW_PASS);
        kernels.function(PILLOW_PASS_NORMALIZE);
        kernels.function(PILLOW_PASS_SCALE_NORMALIZE);
        kernels.function(MASK_POSTPROCESS);
        kernels.function(YUV_TO_RGB);
    }

    /**
     * A GPU frame's NV12 / P010 / P016 planes to 8-bit RGB {@code [h, w, 3]} at {@code dst} (image_ops.cuh:
     * bilinear chroma, the frame's matrix and range). The planes are read where the decoder left them.
     */
    public void yuvToRgb8(CudaStream stream, io.samstream.gpu.image.DeviceYuvImage frame, DeviceBuffer dst) {
        String op = String.format(Locale.ROOT, "yuvToRgb8 %dx%d%s", frame.width(), frame.height(),
                frame.sixteenBit() ? " 16-bit" : "");
        // Interleaved chroma: Cr is one sample after Cb, both every second sample.
        long cr = frame.chroma() + (frame.sixteenBit() ? 2 : 1);
        yuvToRgb8(stream, op, frame.luma(), frame.lumaPitch(), frame.chroma(), cr, frame.chromaPitch(), 2,
                frame.width(), frame.height(), frame.sixteenBit(), frame.kr(), frame.kb(), frame.fullRange(), dst);
    }

    /**
     * A CPU decoder's I420 planes, uploaded tightly packed to {@code planes} ({@link HostYuvImage}'s layout), to
     * 8-bit RGB {@code [h, w, 3]} at {@code dst}: the same conversion as NVDEC's frames.
     */
    public void yuvToRgb8(CudaStream stream, HostYuvImage frame, DeviceBuffer planes, DeviceBuffer dst) {
        String op = String.format(Locale.ROOT, "yuvToRgb8 I420 %dx%d", frame.width(), frame.height());
        requireBytes(planes, frame.planeBytes(), op, "planes");
        long cb = planes.address() + (long) frame.width() * frame.height();
        long cr = cb + (long) frame.chromaWidth() * frame.chromaHeight();
        yuvToRgb8(stream, op, planes.address(), frame.width(), cb, cr, frame.chromaWidth(), 1, frame.width(),
                frame.height(), false, frame.kr(), frame.kb(), frame.fullRange(), dst);
    }

    private void yuvToRgb8(CudaStream stream, String op, long luma, int lumaPitch, long cb, long cr, int chromaPitch,
            int chromaStep, int width, int height, boolean sixteenBit, float kr, float kb, boolean fullRange,
            DeviceBuffer dst) {
        requireBytes(dst, 3L * width * height, op, "dst");
        Pointer params = Pointer.to(Pointer.to(new long[] {luma}), ints(lumaPitch), Pointer.to(new long[] {cb}),
                Pointer.to(new long[] {cr}), ints(chromaPitch), ints(chromaStep), ints(width), ints(height),
                ints(sixteenBit ? 1 : 0), floats(kr), floats(kb), ints(fullRange ? 1 : 0), ptr(dst));
        launch(YUV_TO_RGB, gridFor((long) width * height), 1, stream, params, op);
    }

    /** Bytes of a pass' tables: bounds (2 ints per output pixel), then weights, each 16-byte aligned. */
    public static long tableBytes(Pass p) {
        return align16(boundsBytes(p)) + align16(weightsBytes(p));
    }

    public static long boundsBytes(Pass p) {
        return (long) p.bounds().length * 4;
    }

    public static long weightsBytes(Pass p) {
        return (long) p.weights().length * 4;
    }

    public static long align16(long bytes) {
        return (bytes + 15) & ~15L;
    }

    private static int outLength(Pass p) {
        return p.horizontal() ? p.outWidth() : p.outHeight();
    }

    private static void checkPass(Pass p, DeviceBuffer bounds, DeviceBuffer weights, String op) {
        int n = outLength(p);
        require(p.bounds().length == 2 * n && p.weights().length == n * p.kernelSize(), op + ": malformed pass tables");
        requireBytes(bounds, 8L * n, op, "bounds");
        requireBytes(weights, 4L * n * p.kernelSize(), op, "weights");
    }

    /** One Pillow pass from an 8-bit {@code [p.inHeight, p.inWidth, 3]} image into {@code [p.outHeight, p.outWidth, 3]}. */
    public void pillowPass(CudaStream stream, DeviceBuffer src, DeviceBuffer dst, Pass p, DeviceBuffer bounds,
            DeviceBuffer weights) {
        String op = String.format(Locale.ROOT, "pillowPass %s %dx%d -> %dx%d", p.horizontal() ? "horizontal" : "vertical",
                p.inWidth(), p.inHeight(), p.outWidth(), p.outHeight());
        checkPass(p, bounds, weights, op);
        require(p.horizontal() ? p.firstRow() + p.outHeight() <= p.inHeight() : p.outWidth() == p.inWidth(),
                op + ": rows or width outside the input");
        requireBytes(src, 3L * p.inWidth() * p.inHeight(), op, "src");
        requireBytes(dst, 3L * p.outWidth() * p.outHeight(), op, "dst");
        Pointer params = Pointer.to(ptr(src), ptr(dst), ints(p.inWidth()), ints(p.outWidth()), ints(p.outHeight()),
                ints(p.horizontal() ? 1 : 0), ints(p.firstRow()), ptr(bounds), ptr(weights), ints(p.kernelSize()));
        launch(PILLOW_PASS, gridFor(3L * p.outWidth() * p.outHeight()), 1, stream, params, op);
    }

    /**
     * The fp32 encoder input {@code [3, s, s]} of one frame at {@code out}: pixel (x, y) inside {@code w x h}
     * is {@code (v - mean[c]) / std[c]}, v the byte {@code last} computes from {@code src} (or, when
     * {@code last} is null, the byte of the {@code w x h} image {@code src} itself); the rest is 0.
     */
    public void pillowPassNormalize(CudaStream stream, DeviceBuffer src, DeviceBuffer out, int w, int h, int s,
            Pass last, DeviceBuffer bounds, DeviceBuffer weights, float[] mean, float[] std) {
        pillowPassNormalize(stream, src, out, w, h, s, last, bounds, weights, Float.NaN, mean, std);
    }

    /**
     * {@link #pillowPassNormalize(CudaStream, DeviceBuffer, DeviceBuffer, int, int, int, Pass, DeviceBuffer,
     * DeviceBuffer, float[], float[])} with the byte scaled first: {@code (v / scale - mean[c]) / std[c]}, three
     * IEEE roundings, as Java computes {@code ((v / 255f) - 0.5f) / 0.5f} (SAM 3's input; {@code scale} 255).
     */
    public void pillowPassScaleNormalize(CudaStream stream, DeviceBuffer src, DeviceBuffer out, int w, int h, int s,
            Pass last, DeviceBuffer bounds, DeviceBuffer weights, float scale, float[] mean, float[] std) {
        require(scale > 0 && Float.isFinite(scale), "pillowPassScaleNormalize: scale must be positive, got " + scale);
        pillowPassNormalize(stream, src, out, w, h, s, last, bounds, weights, scale, mean, std);
    }

    /** Both normalizations; {@code scale} NaN: none (the SAM kernel, which has no such parameter). */
    private void pillowPassNormalize(CudaStream stream, DeviceBuffer src, DeviceBuffer out, int w, int h, int s,
            Pass last, DeviceBuffer bounds, DeviceBuffer weights, float scale, float[] mean, float[] std) {
        boolean scaled = !Float.isNaN(scale);
        String op = String.format(Locale.ROOT, "%s %dx%d into %dx%d",
                scaled ? "pillowPassScaleNormalize" : "pillowPassNormalize", w, h, s, s);
        require(w > 0 && h > 0 && w <= s && h <= s, op + ": the image must fit the input");
        require(mean.length == 3 && std.length == 3, op + ": mean and std need 3 values");
        requireBytes(out, 3L * s * s * 4, op, "out (fp32)");
        int inW = w;
        if (last != null) {
            checkPass(last, bounds, weights, op);
            require(last.outWidth() == w && last.outHeight() == h, op + ": the last pass makes "
                    + last.outWidth() + "x" + last.outHeight());
            require(last.horizontal() ? last.firstRow() + h <= last.inHeight() : last.inWidth() == w,
                    op + ": rows or width outside the input");
            requireBytes(src, 3L * last.inWidth() * last.inHeight(), op, "src");
            inW = last.inWidth();
        } else {
            requireBytes(src, 3L * w * h, op, "src");
        }
        Pointer[] common = {ptr(src), ptr(out), ints(inW), ints(w), ints(h), ints(s),
                ints(last == null ? -1 : last.horizontal() ? 1 : 0), ints(last == null ? 0 : last.firstRow()),
                ptr(last == null ? null : bounds), ptr(last == null ? null : weights),
                ints(last == null ? 0 : last.kernelSize())};
        Pointer[] norm = {floats(mean[0]), floats(mean[1]), floats(mean[2]), floats(std[0]), floats(std[1]),
                floats(std[2])};
        Pointer[] all = new Pointer[common.length + (scaled ? 1 : 0) + norm.length];
        System.arraycopy(common, 0, all, 0, common.length);
        if (scaled) {
            all[common.length] = floats(scale);
        }
        System.arraycopy(norm, 0, all, all.length - norm.length, norm.length);
        launch(scaled ? PILLOW_PASS_SCALE_NORMALIZE : PILLOW_PASS_NORMALIZE, gridFor(3L * s * s), 1, stream,
                Pointer.to(all), op);
    }

    /** 32-bit words per mask of {@link #maskPostprocess}'s bit output: {@code ceil(h * w / 32)}, rounded up to even. */
    public static int wordsPerMask(int height, int width) {
        long words = ((long) height * width + 31) / 32;
        return Math.toIntExact((words + 1) & ~1L);
    }

    /**
     * Upscales, thresholds and summarizes {@code count} low-res planes {@code [count, lh, lw]} (fp32):
     * column-major mask bits ({@link #wordsPerMask} words per mask) into {@code bits}, and
     * {@value #STAT_WORDS} statistics words per mask into {@code stats}, which must be zero before the launch.
     */
    public void maskPostprocess(CudaStream stream, DeviceBuffer logits, int count, int lh, int lw, int s,
            int resizedH, int resizedW, int height, int width, DeviceBuffer bits, DeviceBuffer stats) {
        String op = String.format(Locale.ROOT, "maskPostprocess %d x %dx%d -> %dx%d (resized %dx%d, input %d)", count, lh,
                lw, height, width, resizedH, resizedW, s);
        require(count > 0 && count <= 65535, op + ": 1..65535 masks per launch");
        require(lh > 0 && lw > 0 && s > 0 && height > 0 && width > 0, op + ": sizes must be positive");
        require(resizedH > 0 && resizedW > 0 && resizedH <= s && resizedW <= s, op + ": resized size must fit the input");
        int words = wordsPerMask(height, width);
        requireBytes(logits, 4L * count * lh * lw, op, "logits (fp32)");
        requireBytes(bits, 4L * count * words, op, "bits");
        requireBytes(stats, 4L * count * STAT_WORDS, op, "stats");
        int ctasPerMask = (int) Math.max(1, Math.min((words + 7) / 8,
                Math.max(1, (long) context.info().multiprocessors() * 8 / count)));
        Pointer params = Pointer.to(ptr(logits), ints(lh), ints(lw), ints(s), ints(resizedH), ints(resizedW),
                ints(height), ints(width), ints(words), ptr(bits), ptr(stats));
        launch(MASK_POSTPROCESS, ctasPerMask, count, stream, params, op);
    }

    private int gridFor(long threads) {
        long ctas = (threads + THREADS - 1) / THREADS;
        long cap = (long) context.info().multiprocessors() * 16;
        return (int) Math.max(1, Math.min(ctas, cap));
    }

    private void launch(String name, int gx, int gy, CudaStream stream, Pointer params, String op) {
        kernels.launchFunction(name, gx, gy, 1, THREADS, stream, params, () -> "launching " + name + " for " + op);
    }

    private static Pointer ptr(DeviceBuffer b) {
        return Pointer.to(b == null ? new jcuda.driver.CUdeviceptr() : b.pointer());
    }

    private static Pointer ints(int v) {
        return Pointer.to(new int[] {v});
    }

    private static Pointer floats(float v) {
        return Pointer.to(new float[] {v});
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    private static void requireBytes(DeviceBuffer b, long bytes, String op, String name) {
        if (b == null) {
            throw new IllegalArgumentException(op + ": " + name + " is required");
        }
        if (b.bytes() < bytes) {
            throw new IllegalArgumentException(op + ": " + name + " needs " + bytes + " B, " + b + " holds " + b.bytes());
        }
        if (b.offset() % 4 != 0) {
            throw new IllegalArgumentException(op + ": " + name + " must be 4-byte aligned (" + b + ")");
        }
    }
}
