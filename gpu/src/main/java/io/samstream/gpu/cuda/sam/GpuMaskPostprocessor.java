package io.samstream.gpu.cuda.sam;

import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.ImageOpsKernels;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.SamBackend;
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
 * <p>{@link #runAll} takes the chosen masks of several frames at once (the engine's decoder hands it a
 * wave: the k-th frame of every stream in a micro-batch). Device scratch and pinned buffers grow when a
 * larger batch or frame comes (after the stream's queued work), and are kept. Calls are serialized ({@code synchronized}); each returns when its results are
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

    /** Host logits {@code [..., L, L]} of one frame: uploaded on this post-processor's own stream. */
    public List<MaskSummary> run(Tensor lowRes, ImageSize resized, ImageSize original) {
        return runAll(List.of(new SamBackend.MaskRequest(lowRes, resized, original))).get(0);
    }

    /**
     * The chosen planes of several frames (each its own size) in one go: planes the GPU decoder kept are copied
     * on the device, host planes staged and uploaded at once; the launches, one download of all the bits and
     * statistics, one wait.
     *
     * @return per request, one summary per plane
     */
    public synchronized List<List<MaskSummary>> runAll(List<SamBackend.MaskRequest> requests) {
        ensureOpen();
        int n = requests.size();
        Layout[] layouts = new Layout[n];
        long logitBytes = 0;
        long statBytes = 0;
        long bitBytes = 0;
        Object owner = null;
        for (int i = 0; i < n; i++) {
            SamBackend.MaskRequest r = requests.get(i);
            if (r.planes().isEmpty()) {
                throw new IllegalArgumentException("mask request " + i + " has no planes");
            }
            int[] hw = planeSize(r.planes().get(0));
            for (DecoderOutput.Plane p : r.planes()) {
                int[] other = planeSize(p);
                if (other[0] != hw[0] || other[1] != hw[1]) {
                    throw new IllegalArgumentException("mask request " + i + " mixes " + hw[0] + "x" + hw[1] + " and "
                            + other[0] + "x" + other[1] + " logit planes");
                }
                if (kept(p) != null) {
                    owner = kept(p).owner();
                }
            }
            checkGeometry(r.resized(), r.original());
            int count = r.planes().size();
            int words = ImageOpsKernels.wordsPerMask(r.original().height(), r.original().width());
            layouts[i] = new Layout(count, hw[0], hw[1], r.resized(), r.original(), logitBytes, statBytes, bitBytes);
            logitBytes += BumpAllocator.alignUp(4L * count * hw[0] * hw[1]);
            statBytes += BumpAllocator.alignUp(4L * count * ImageOpsKernels.STAT_WORDS);
            bitBytes += BumpAllocator.alignUp(4L * count * words);
        }
        if (n == 0) {
            return List.of();
        }
        if (owner == null) {
            return runStaged(requests, layouts, logitBytes, statBytes, bitBytes);
        }
        synchronized (owner) { // the decoder keeps its logits until its next call: none while these are read
            return runStaged(requests, layouts, logitBytes, statBytes, bitBytes);
        }
    }

    private List<List<MaskSummary>> runStaged(List<SamBackend.MaskRequest> requests, Layout[] layouts, long logitBytes,
            long statBytes, long bitBytes) {
        Buffers b = buffers(logitBytes, statBytes, bitBytes, ownStream);
        boolean upload = false;
        for (int i = 0; i < layouts.length; i++) {
            Layout l = layouts[i];
            long planeBytes = 4L * l.lh() * l.lw();
            List<DecoderOutput.Plane> planes = requests.get(i).planes();
            for (int k = 0; k < planes.size(); k++) {
                DecoderOutput.Plane p = planes.get(k);
                long at = l.logitAt() + k * planeBytes;
                CudaMaskDecoder.KeptLogits kept = kept(p);
                if (kept != null) {
                    DeviceBuffer dst = b.logits.slice(at, planeBytes, "mask logits");
                    kept.withDevice(p.index(), src -> {
                        ownStream.copy(src, dst, planeBytes);
                        return null;
                    });
                    continue;
                }
                if (!upload) {
                    input = pinned(input, logitBytes, "mask logits staging");
                    upload = true;
                }
                int plane = l.lh() * l.lw();
                ByteBuffer staging = input.buffer();
                staging.position((int) at);
                staging.slice().order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer()
                        .put(p.output().lowResLogits().data(), p.index() * plane, plane);
                staging.clear();
            }
        }
        if (upload) {
            ownStream.upload(input, 0, b.logits, 0, logitBytes);
        }
        for (Layout l : layouts) {
            enqueue(ownStream, b.logits.slice(l.logitAt, 4L * l.count * l.lh * l.lw, "mask logits"), b, l);
        }
        return read(ownStream, b, layouts, statBytes, bitBytes);
    }

    /** The decoder's device logits of a plane while they are current, else null (read from the host). */
    private static CudaMaskDecoder.KeptLogits kept(DecoderOutput.Plane p) {
        return p.output().source() instanceof CudaMaskDecoder.KeptLogits k && k.current() ? k : null;
    }

    /** {@code [lh, lw]} of a plane. */
    private static int[] planeSize(DecoderOutput.Plane p) {
        if (p.output().source() instanceof CudaMaskDecoder.KeptLogits k) {
            return new int[] {k.size(), k.size()};
        }
        Tensor lowRes = p.output().lowResLogits();
        if (lowRes.rank() < 2) {
            throw new IllegalArgumentException("low-res logits need at least 2 dimensions, got " + lowRes.shapeString());
        }
        if (lowRes.dim(-2) == 0 || lowRes.dim(-1) == 0 || lowRes.size() == 0) {
            throw new IllegalArgumentException("low-res logits have an empty plane: " + lowRes.shapeString());
        }
        return new int[] {lowRes.dim(-2), lowRes.dim(-1)};
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
        Layout l = new Layout(count, lh, lw, resized, original, 0, 0, 0);
        long statBytes = 4L * count * ImageOpsKernels.STAT_WORDS;
        long bitBytes = 4L * count * ImageOpsKernels.wordsPerMask(original.height(), original.width());
        Buffers b = buffers(0, statBytes, bitBytes, stream);
        enqueue(stream, logits, b, l);
        return read(stream, b, new Layout[] {l}, statBytes, bitBytes).get(0);
    }

    private void checkGeometry(ImageSize resized, ImageSize original) {
        if (resized.height() > inputSize || resized.width() > inputSize) {
            throw new IllegalArgumentException("resized size " + resized + " exceeds the " + inputSize + "x" + inputSize
                    + " model input");
        }
    }

    /** Where one request's planes, statistics and bits lie in the scratch and staging buffers. */
    private record Layout(int count, int lh, int lw, ImageSize resized, ImageSize original, long logitAt, long statAt,
                          long bitAt) {
        int words() {
            return ImageOpsKernels.wordsPerMask(original.height(), original.width());
        }
    }

    private record Buffers(DeviceBuffer logits, DeviceBuffer stats, DeviceBuffer bits) {}

    private Buffers buffers(long logitBytes, long statBytes, long bitBytes, CudaStream stream) {
        long need = logitBytes + statBytes + bitBytes + 3 * 256;
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
        return new Buffers(scratch.allocate(Math.max(logitBytes, 1), "mask logits"),
                scratch.allocate(statBytes, "mask stats"), scratch.allocate(bitBytes, "mask bits"));
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

    /** Queues one request's statistics reset and kernels (at most 65535 planes per launch). */
    private void enqueue(CudaStream stream, DeviceBuffer logits, Buffers b, Layout l) {
        int words = l.words();
        int h = l.original().height();
        int w = l.original().width();
        long planeBytes = 4L * l.lh() * l.lw();
        DeviceBuffer stats = b.stats.slice(l.statAt(), 4L * l.count() * ImageOpsKernels.STAT_WORDS, "mask stats");
        DeviceBuffer bits = b.bits.slice(l.bitAt(), 4L * l.count() * words, "mask bits");
        stream.fill16(stats, (short) 0);
        for (int first = 0; first < l.count(); first += 65535) {
            int n = Math.min(65535, l.count() - first);
            kernels.maskPostprocess(stream, logits.slice(planeBytes * first, planeBytes * n, "mask logits"), n, l.lh(),
                    l.lw(), inputSize, l.resized().height(), l.resized().width(), h, w,
                    bits.slice(4L * first * words, 4L * n * words, "mask bits"),
                    stats.slice(4L * first * ImageOpsKernels.STAT_WORDS, 4L * n * ImageOpsKernels.STAT_WORDS,
                            "mask stats"));
        }
    }

    /** Downloads every request's statistics and bits (two copies), waits, and unpacks them. */
    private List<List<MaskSummary>> read(CudaStream stream, Buffers b, Layout[] layouts, long statBytes, long bitBytes) {
        output = pinned(output, statBytes + bitBytes, "mask results staging");
        stream.download(b.stats, 0, output, 0, statBytes);
        stream.download(b.bits, 0, output, statBytes, bitBytes);
        stream.synchronize();

        ByteBuffer buf = output.buffer();
        IntBuffer stats = buf.asIntBuffer();
        List<List<MaskSummary>> all = new ArrayList<>(layouts.length);
        for (Layout l : layouts) {
            int h = l.original().height();
            int w = l.original().width();
            int longsPerMask = l.words() / 2;
            List<MaskSummary> out = new ArrayList<>(l.count());
            for (int m = 0; m < l.count(); m++) {
                int s = (int) (l.statAt() / 4) + m * ImageOpsKernels.STAT_WORDS;
                long area = stats.get(s + ImageOpsKernels.STAT_AREA) & 0xFFFFFFFFL;
                int[] box = area == 0 ? new int[4] : new int[] {
                    w - stats.get(s + ImageOpsKernels.STAT_W_MINUS_MINX),
                    h - stats.get(s + ImageOpsKernels.STAT_H_MINUS_MINY),
                    stats.get(s + ImageOpsKernels.STAT_MAXX_PLUS1), stats.get(s + ImageOpsKernels.STAT_MAXY_PLUS1)};
                long[] bits = new long[longsPerMask];
                LongBuffer lb = buf.position((int) (statBytes + l.bitAt() + 8L * m * longsPerMask)).slice()
                        .order(java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer();
                lb.get(bits);
                out.add(new MaskSummary(h, w, bits, area, box,
                        stats.get(s + ImageOpsKernels.STAT_ABOVE_PLUS1) & 0xFFFFFFFFL,
                        stats.get(s + ImageOpsKernels.STAT_ABOVE_MINUS1) & 0xFFFFFFFFL));
            }
            all.add(out);
        }
        buf.clear();
        return all;
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
