package io.samstream.gpu.cuda;

import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.tensor.Tensor;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * SAM's mask post-processing on the GPU: low-res logits {@code [N, L, L]} to one {@link MaskSummary} per
 * mask, with the values of {@link io.samstream.gpu.image.MaskPostprocessor#summarize} (bilinear, crop,
 * bilinear in fp32 as PyTorch, threshold at 0, stability counts at +-1, area, box; image_ops.cuh). Only the
 * column-major mask bits (H x W / 8 bytes per mask) and 32 bytes of statistics per mask come back.
 *
 * <p>Device scratch and pinned buffers grow when a larger batch or frame comes (after the stream's queued
 * work), and are kept. Calls are serialized ({@code synchronized}); each returns when its results are
 * on the host.
 */
public final class GpuMaskPostprocessor implements AutoCloseable {
    private final CudaContext context;
    private final ImageOpsKernels kernels;
    private final int inputSize;
    private final CudaStream ownStream;
    private DeviceMemoryPool scratch;
    private PinnedBuffer input;
    private PinnedBuffer output;
    private boolean closed;

    /** @param inputSize side S of the square encoder input (1024 for SAM) */
    public GpuMaskPostprocessor(CudaContext context, ImageOpsKernels kernels, int inputSize) {
        if (inputSize <= 0) {
            throw new IllegalArgumentException("input size must be positive, got " + inputSize);
        }
        this.context = context;
        this.kernels = kernels;
        this.inputSize = inputSize;
        this.ownStream = new CudaStream(context);
    }

    /** Host logits {@code [..., L, L]}: uploaded on this post-processor's own stream. */
    public synchronized List<MaskSummary> run(Tensor lowRes, ImageSize resized, ImageSize original) {
        ensureOpen();
        if (lowRes.rank() < 2) {
            throw new IllegalArgumentException("low-res logits need at least 2 dimensions, got " + lowRes.shapeString());
        }
        int lh = lowRes.dim(-2);
        int lw = lowRes.dim(-1);
        if (lh == 0 || lw == 0 || lowRes.size() == 0) {
            throw new IllegalArgumentException("low-res logits have an empty plane: " + lowRes.shapeString());
        }
        int count = lowRes.size() / (lh * lw);
        checkGeometry(resized, original);
        long inBytes = 4L * lowRes.size();
        Buffers b = buffers(count, lh, lw, original, ownStream);
        input = pinned(input, inBytes, "mask logits staging");
        input.buffer().asFloatBuffer().put(lowRes.data());
        ownStream.upload(input, 0, b.logits, 0, inBytes);
        return launchAndRead(ownStream, b.logits, b, count, lh, lw, resized, original);
    }

    /**
     * Device logits {@code [count, lh, lw]} (fp32, e.g. the GPU mask decoder's output), processed on
     * {@code stream} after the work already queued there (which must have written them).
     */
    public synchronized List<MaskSummary> run(CudaStream stream, DeviceBuffer logits, int count, int lh, int lw,
            ImageSize resized, ImageSize original) {
        ensureOpen();
        if (count <= 0 || lh <= 0 || lw <= 0) {
            throw new IllegalArgumentException("logits must be [count, lh, lw] with positive sizes, got [" + count + ", "
                    + lh + ", " + lw + "]");
        }
        checkGeometry(resized, original);
        Buffers b = buffers(count, lh, lw, original, stream);
        return launchAndRead(stream, logits, b, count, lh, lw, resized, original);
    }

    private void checkGeometry(ImageSize resized, ImageSize original) {
        if (resized.height() > inputSize || resized.width() > inputSize) {
            throw new IllegalArgumentException("resized size " + resized + " exceeds the " + inputSize + "x" + inputSize
                    + " model input");
        }
    }

    private record Buffers(DeviceBuffer logits, DeviceBuffer bits, DeviceBuffer stats) {}

    private Buffers buffers(int count, int lh, int lw, ImageSize original, CudaStream stream) {
        int words = ImageOpsKernels.wordsPerMask(original.height(), original.width());
        long logitBytes = 4L * count * lh * lw;
        long bitBytes = 4L * count * words;
        long statBytes = 4L * count * ImageOpsKernels.STAT_WORDS;
        long need = logitBytes + bitBytes + statBytes + 3 * 256;
        if (scratch == null || scratch.capacity() < need) {
            stream.synchronize();
            ownStream.synchronize();
            if (scratch != null) {
                scratch.close();
                scratch = null;
            }
            scratch = new DeviceMemoryPool(context, need / 4 * 5);
        }
        scratch.release(0);
        return new Buffers(scratch.allocate(logitBytes, "mask logits"), scratch.allocate(bitBytes, "mask bits"),
                scratch.allocate(statBytes, "mask stats"));
    }

    private PinnedBuffer pinned(PinnedBuffer current, long bytes, String what) {
        if (current != null && current.bytes() >= bytes) {
            return current;
        }
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(what + ": " + bytes + " B is more than one pinned buffer holds (2 GiB)");
        }
        if (current != null) {
            current.close();
        }
        return new PinnedBuffer(context, Math.min(Integer.MAX_VALUE, bytes / 4 * 5 + 64), what);
    }

    private List<MaskSummary> launchAndRead(CudaStream stream, DeviceBuffer logits, Buffers b, int count, int lh, int lw,
            ImageSize resized, ImageSize original) {
        int h = original.height();
        int w = original.width();
        int words = ImageOpsKernels.wordsPerMask(h, w);
        long bitBytes = 4L * count * words;
        long statBytes = 4L * count * ImageOpsKernels.STAT_WORDS;
        output = pinned(output, bitBytes + statBytes, "mask results staging");
        stream.fill16(b.stats.slice(0, statBytes, "mask stats"), (short) 0);
        for (int first = 0; first < count; first += 65535) {
            int n = Math.min(65535, count - first);
            kernels.maskPostprocess(stream,
                    logits.slice(4L * first * lh * lw, 4L * n * lh * lw, "mask logits"), n, lh, lw, inputSize,
                    resized.height(), resized.width(), h, w,
                    b.bits.slice(4L * first * words, 4L * n * words, "mask bits"),
                    b.stats.slice(4L * first * ImageOpsKernels.STAT_WORDS, 4L * n * ImageOpsKernels.STAT_WORDS,
                            "mask stats"));
        }
        stream.download(b.stats, 0, output, 0, statBytes);
        stream.download(b.bits, 0, output, statBytes, bitBytes);
        stream.synchronize();

        ByteBuffer buf = output.buffer();
        IntBuffer stats = buf.asIntBuffer();
        List<MaskSummary> out = new ArrayList<>(count);
        int longsPerMask = words / 2;
        for (int m = 0; m < count; m++) {
            int s = m * ImageOpsKernels.STAT_WORDS;
            long area = stats.get(s + ImageOpsKernels.STAT_AREA) & 0xFFFFFFFFL;
            int[] box = area == 0 ? new int[4] : new int[] {
                w - stats.get(s + ImageOpsKernels.STAT_W_MINUS_MINX), h - stats.get(s + ImageOpsKernels.STAT_H_MINUS_MINY),
                stats.get(s + ImageOpsKernels.STAT_MAXX_PLUS1), stats.get(s + ImageOpsKernels.STAT_MAXY_PLUS1)};
            long[] bits = new long[longsPerMask];
            LongBuffer lb = buf.position((int) (statBytes + 8L * m * longsPerMask)).slice()
                    .order(java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer();
            lb.get(bits);
            out.add(new MaskSummary(h, w, bits, area, box, stats.get(s + ImageOpsKernels.STAT_ABOVE_PLUS1) & 0xFFFFFFFFL,
                    stats.get(s + ImageOpsKernels.STAT_ABOVE_MINUS1) & 0xFFFFFFFFL));
        }
        return out;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the GPU mask post-processor is closed");
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        ownStream.synchronize();
        if (output != null) {
            output.close();
        }
        if (input != null) {
            input.close();
        }
        if (scratch != null) {
            scratch.close();
        }
        ownStream.close();
    }
}
