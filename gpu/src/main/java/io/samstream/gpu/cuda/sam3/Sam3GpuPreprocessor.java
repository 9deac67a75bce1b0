package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.ImageOpsKernels;
import io.samstream.gpu.image.PillowBilinearResize;
import io.samstream.gpu.image.PillowBilinearResize.Pass;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.sam3.Sam3Preprocessor;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * SAM 3's image pre-processing ({@link Sam3Preprocessor#modelInput}) on the GPU: an 8-bit RGB image of any size
 * within a bound goes up as it is (its bytes only), and two kernels of image_ops.cuh write the model input, the fp32
 * planar {@code [3, S, S]} that {@link CudaSam3Vit#input()} holds, bit for bit the CPU's values:
 * <ol>
 *   <li>Pillow's antialiased bilinear resize to {@code S x S} (no aspect kept) in its separable passes, with the
 *       fixed-point weights {@link PillowBilinearResize#passes} computes on the host: the first of two passes
 *       ({@code samstream_pillow_pass_u8}) into an 8-bit intermediate, clipped to a byte as Pillow does;</li>
 *   <li>the last pass fused with the normalization ({@code samstream_pillow_pass_scale_normalize_f32}):
 *       {@code ((v / 255) - 0.5) / 0.5} with the same three IEEE roundings as the Java code (a single
 *       {@code (v - 127.5) / 127.5} differs by one ulp for half of the bytes). An image already {@code S x S} has
 *       no pass: the kernel only normalizes.</li>
 * </ol>
 *
 * <p><b>Bound.</b> Images up to {@code maxSide} on either side and {@code maxPixels} in all (by default
 * {@value #DEFAULT_MAX_SIDE} and {@value #DEFAULT_MAX_PIXELS}: DCI 4K, 4096 x 2160, in either orientation); a larger
 * one is refused with an {@link IllegalArgumentException} naming its size, before anything is queued. The bound sizes
 * everything, taken once at construction: each pinned staging slot ({@link #pinnedBytes}) and the device scratch from
 * the caller's pool ({@link #poolBytes}): the frame, the pass tables, the 8-bit intermediate ({@code 3 x S x maxSide}
 * bytes at most). Nothing is allocated per frame.
 *
 * <p><b>Per frame.</b> The bytes are copied into the next pinned slot (the host waits only for that slot's previous
 * upload, an event per slot), uploaded asynchronously, and the kernels queued on the stream, all in stream order:
 * the device scratch is reused by the next frame after the stream has got past this one. The pass tables (a few tens
 * of KiB) go up only when the image size changes; the passes of the last size are kept on the host.
 *
 * <p>Not thread-safe: the owner serializes calls (as {@link CudaSam3} does its parts'). Closing frees the pinned
 * slots and events; the device scratch is the pool's.
 */
public final class Sam3GpuPreprocessor implements AutoCloseable {
    /** The default bound on either side of an image. */
    public static final int DEFAULT_MAX_SIDE = 4096;
    /** The default bound on an image's pixels: 4096 x 2160 (DCI 4K; UHD 3840 x 2160 fits too). */
    public static final long DEFAULT_MAX_PIXELS = 4096L * 2160;
    /** SAM 3's normalization: {@code ((v / SCALE) - MEAN) / STD}, as {@link Sam3Preprocessor}. */
    static final float SCALE = 255f, MEAN = 0.5f, STD = 0.5f;
    private static final float[] MEANS = {MEAN, MEAN, MEAN}, STDS = {STD, STD, STD};
    /** Pinned staging is one {@code cuMemAllocHost} of at most 2 GiB per slot. */
    private static final long MAX_PINNED = Integer.MAX_VALUE;

    private final ImageOpsKernels kernels;
    private final CudaStream stream;
    private final int size, maxSide;
    private final long maxPixels;
    private final PinnedBuffer[] staging;
    private final CudaEvent[] uploaded;
    /** Device scratch: the frame as it came, the pass tables, the first pass' 8-bit output. */
    private final DeviceBuffer frame, tables, intermediate;
    private final long frameRegion;
    private int nextSlot;
    /** The plan of the last image size, and whether its tables are on the device. */
    private Plan plan;
    private boolean tablesUploaded;
    private boolean closed;

    /** The default bound ({@value #DEFAULT_MAX_SIDE} per side, {@value #DEFAULT_MAX_PIXELS} pixels), two slots. */
    public Sam3GpuPreprocessor(CudaKernels kernels, CudaStream stream, DeviceMemoryPool pool, int size) {
        this(kernels, stream, pool, size, DEFAULT_MAX_SIDE, DEFAULT_MAX_PIXELS, 2);
    }

    /**
     * Takes the device scratch ({@link #poolBytes}{@code (size, maxSide, maxPixels)}) from {@code pool} and
     * {@code slots} pinned staging slots of {@link #slotBytes} each. Every frame is queued on {@code stream}.
     *
     * @param size the model's input side S ({@code Sam3Config.Vision.imageSize()}, 1008 at release)
     * @param maxSide the largest width or height an image may have
     * @param maxPixels the most pixels an image may have (at most {@code maxSide²})
     * @param slots pinned slots: with two, the next frame is staged while the stream still uploads the one before
     */
    public Sam3GpuPreprocessor(CudaKernels kernels, CudaStream stream, DeviceMemoryPool pool, int size, int maxSide,
            long maxPixels, int slots) {
        checkBound(size, maxSide, maxPixels);
        if (slots < 1) {
            throw new IllegalArgumentException("at least one staging slot, got " + slots);
        }
        this.kernels = kernels.family(ImageOpsKernels.class, ImageOpsKernels::new);
        this.stream = stream;
        this.size = size;
        this.maxSide = maxSide;
        this.maxPixels = maxPixels;
        this.frameRegion = frameRegion(maxPixels);
        long tableRegion = tableRegion(size, maxSide);
        // Device: [frame | tables] as staged (one slot's layout), then the intermediate.
        DeviceBuffer staged = pool.allocate(frameRegion + tableRegion, "sam3 preprocess staged frame and tables");
        this.frame = staged.slice(0, frameRegion, "sam3 preprocess frame (RGB8)");
        this.tables = staged.slice(frameRegion, tableRegion, "sam3 preprocess pass tables");
        this.intermediate = pool.allocate(intermediateBytes(size, maxSide), "sam3 preprocess intermediate (RGB8)");
        CudaContext context = kernels.context();
        this.staging = new PinnedBuffer[slots];
        this.uploaded = new CudaEvent[slots];
        try {
            for (int i = 0; i < slots; i++) {
                uploaded[i] = new CudaEvent(context, false);
                staging[i] = new PinnedBuffer(context, frameRegion + tableRegion, "sam3 preprocess staging " + i);
            }
        } catch (RuntimeException e) {
            freeHost();
            throw e;
        }
    }

    /** The model input side S. */
    public int size() {
        return size;
    }

    public int maxSide() {
        return maxSide;
    }

    public long maxPixels() {
        return maxPixels;
    }

    /** Bytes of one model input, fp32 {@code [3, S, S]}: what {@link #enqueue} writes. */
    public static long inputBytes(int size) {
        return 3L * size * size * 4;
    }

    /**
     * Queues {@code image}'s model input into {@code out} (fp32 planar {@code [3, S, S]} from its start, e.g.
     * {@link CudaSam3Vit#input()}, or image {@code i} of a batch: {@code input.slice(i * inputBytes(S),
     * inputBytes(S), ...)}) on the stream. Returns once the image is in pinned memory and its upload and kernels
     * are queued; the values are there when the stream gets past this point (a later kernel on the same stream
     * reads them; the host synchronizes the stream first).
     *
     * @throws IllegalArgumentException when the image is outside the bound (naming its size) or {@code out} is too
     *     small or misaligned; nothing is queued then
     */
    public void enqueue(RgbImage image, DeviceBuffer out) {
        if (closed) {
            throw new IllegalStateException("the SAM 3 GPU pre-processing is closed");
        }
        Objects.requireNonNull(image, "image");
        Objects.requireNonNull(out, "out");
        checkImage(image.width(), image.height(), maxSide, maxPixels);
        if (out.bytes() < inputBytes(size) || out.offset() % 4 != 0) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "the SAM 3 model input at %d needs %d B, "
                    + "4-byte aligned; %s holds %d B at offset %d", size, inputBytes(size), out, out.bytes(),
                    out.offset()));
        }
        Plan p = planFor(image.width(), image.height());

        int slot = nextSlot;
        nextSlot = (nextSlot + 1) % staging.length;
        uploaded[slot].synchronize();
        PinnedBuffer pinned = staging[slot];
        ByteBuffer buf = pinned.buffer();
        buf.put(image.rgb());
        stream.upload(pinned, 0, frame, 0, p.rgbBytes);
        if (!tablesUploaded) {
            // Rare (the size changed): the tables go up from the same slot, after the frame's bytes.
            p.writeTables(buf, frameRegion);
            stream.upload(pinned, frameRegion, tables, 0, p.tableBytes);
            tablesUploaded = true;
        }
        stream.record(uploaded[slot]);

        DeviceBuffer src = frame.slice(0, p.rgbBytes, "sam3 preprocess frame");
        List<Pass> passes = p.passes;
        switch (passes.size()) {
            case 0 -> kernels.pillowPassScaleNormalize(stream, src, out, size, size, size, null, null, null, SCALE,
                    MEANS, STDS);
            case 1 -> kernels.pillowPassScaleNormalize(stream, src, out, size, size, size, passes.get(0),
                    p.bounds(tables, 0), p.weights(tables, 0), SCALE, MEANS, STDS);
            default -> {
                Pass first = passes.get(0);
                DeviceBuffer mid = intermediate.slice(0, 3L * first.outWidth() * first.outHeight(),
                        "sam3 preprocess intermediate");
                kernels.pillowPass(stream, src, mid, first, p.bounds(tables, 0), p.weights(tables, 0));
                kernels.pillowPassScaleNormalize(stream, mid, out, size, size, size, passes.get(1),
                        p.bounds(tables, 1), p.weights(tables, 1), SCALE, MEANS, STDS);
            }
        }
    }

    /** The passes for a {@code width x height} image (those of the last size are kept). */
    private Plan planFor(int width, int height) {
        if (plan == null || plan.width != width || plan.height != height) {
            Plan p = plan(width, height, size);
            if (p.rgbBytes > frameRegion || p.tableBytes > tables.bytes()
                    || p.intermediateBytes > intermediate.bytes()) {
                // checkImage and the bound's arithmetic make this impossible; say so loudly if it is not.
                throw new IllegalStateException("a " + width + "x" + height + " image needs " + p + ", more than the "
                        + "scratch sized for the bound holds");
            }
            plan = p;
            tablesUploaded = false;
        }
        return plan;
    }

    /** Bytes of pinned host memory held: the slots. */
    public long pinnedBytesHeld() {
        long total = 0;
        for (PinnedBuffer b : staging) {
            total += b == null ? 0 : b.bytes();
        }
        return total;
    }

    /** Waits for the slots' uploads, frees the pinned slots and the events; the device scratch stays the pool's. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        freeHost();
    }

    private void freeHost() {
        for (int i = 0; i < staging.length; i++) {
            if (uploaded[i] != null) {
                uploaded[i].synchronize();
                uploaded[i].close();
                uploaded[i] = null;
            }
            if (staging[i] != null) {
                staging[i].close();
                staging[i] = null;
            }
        }
    }

    // ---- the bound's arithmetic (no GPU needed) ------------------------------------------------------------------

    /** The constructor's checks: a positive size, a positive bound, {@code maxPixels <= maxSide²}, a slot under 2 GiB. */
    static void checkBound(int size, int maxSide, long maxPixels) {
        if (size <= 0) {
            throw new IllegalArgumentException("the SAM 3 model input size must be positive, got " + size);
        }
        if (maxSide <= 0 || maxPixels <= 0) {
            throw new IllegalArgumentException("the image bound must be positive, got sides up to " + maxSide + " and "
                    + maxPixels + " pixels");
        }
        if (maxPixels > (long) maxSide * maxSide) {
            throw new IllegalArgumentException("an image bound of " + maxPixels + " pixels is more than sides up to "
                    + maxSide + " allow (" + (long) maxSide * maxSide + ")");
        }
        long slot = frameRegion(maxPixels) + tableRegion(size, maxSide);
        if (slot > MAX_PINNED) {
            throw new IllegalArgumentException("an image bound of " + maxPixels + " pixels (sides up to " + maxSide
                    + ") at input " + size + " needs a " + slot + " B staging slot; 2 GiB at most");
        }
    }

    /** Refuses an image outside the bound, naming its size and the bound. */
    static void checkImage(int width, int height, int maxSide, long maxPixels) {
        if (width <= 0 || height <= 0 || width > maxSide || height > maxSide || (long) width * height > maxPixels) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "a %dx%d image is outside the SAM 3 GPU "
                    + "pre-processing's bound: sides 1 to %d, at most %d pixels", width, height, maxSide, maxPixels));
        }
    }

    /**
     * Device bytes the pool gives a pre-processor of input {@code size} and this bound: the staged frame and tables,
     * and the intermediate, each rounded up to the pool's alignment. Add it to the owner's pool.
     */
    public static long poolBytes(int size, int maxSide, long maxPixels) {
        checkBound(size, maxSide, maxPixels);
        return align(frameRegion(maxPixels) + tableRegion(size, maxSide)) + align(intermediateBytes(size, maxSide));
    }

    /** {@link #poolBytes(int, int, long)} for the default bound. */
    public static long poolBytes(int size) {
        return poolBytes(size, DEFAULT_MAX_SIDE, DEFAULT_MAX_PIXELS);
    }

    /** Pinned host bytes of one staging slot: the largest image's bytes and the largest tables. */
    public static long slotBytes(int size, int maxSide, long maxPixels) {
        checkBound(size, maxSide, maxPixels);
        return frameRegion(maxPixels) + tableRegion(size, maxSide);
    }

    /** The frame's share of a slot: the largest image's bytes, 16-byte aligned (the tables follow). */
    static long frameRegion(long maxPixels) {
        return ImageOpsKernels.align16(3 * maxPixels);
    }

    /**
     * Tables of two passes, each to S outputs from at most {@code maxSide} inputs: bounds (2 ints per output) and
     * weights ({@code kernelSize} ints per output, {@code kernelSize = 2 ceil(max(in / S, 1)) + 1} as Pillow's, which
     * grows with the input), each 16-byte aligned as {@link ImageOpsKernels#tableBytes} lays them out.
     */
    static long tableRegion(int size, int maxSide) {
        int kernelSize = 2 * (int) Math.ceil(Math.max((double) maxSide / size, 1.0)) + 1;
        return 2 * (ImageOpsKernels.align16(8L * size) + ImageOpsKernels.align16(4L * size * kernelSize));
    }

    /**
     * The first of two passes' output: S columns of the rows the second pass reads (at most the image's height), or,
     * for an image over 100 times taller than wide (Pillow's height-first rule), S rows of its width.
     */
    static long intermediateBytes(int size, int maxSide) {
        return 3L * size * maxSide;
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }

    /** What one image size takes: its passes, their tables' layout and the bytes of each region. */
    static Plan plan(int width, int height, int size) {
        return new Plan(width, height, PillowBilinearResize.passes(width, height, size, size));
    }

    static final class Plan {
        final int width, height;
        final List<Pass> passes;
        final long rgbBytes, tableBytes, intermediateBytes;

        Plan(int width, int height, List<Pass> passes) {
            this.width = width;
            this.height = height;
            this.passes = passes;
            this.rgbBytes = 3L * width * height;
            long t = 0;
            for (Pass p : passes) {
                t += ImageOpsKernels.tableBytes(p);
            }
            this.tableBytes = t;
            this.intermediateBytes = passes.size() == 2 ? 3L * passes.get(0).outWidth() * passes.get(0).outHeight() : 0;
        }

        /** Offset of pass {@code i}'s bounds in the tables region; its weights follow, 16-byte aligned. */
        private long boundsAt(int i) {
            long at = 0;
            for (int k = 0; k < i; k++) {
                at += ImageOpsKernels.tableBytes(passes.get(k));
            }
            return at;
        }

        DeviceBuffer bounds(DeviceBuffer tables, int i) {
            return tables.slice(boundsAt(i), ImageOpsKernels.boundsBytes(passes.get(i)), "sam3 pass " + i + " bounds");
        }

        DeviceBuffer weights(DeviceBuffer tables, int i) {
            Pass p = passes.get(i);
            return tables.slice(boundsAt(i) + ImageOpsKernels.align16(ImageOpsKernels.boundsBytes(p)),
                    ImageOpsKernels.weightsBytes(p), "sam3 pass " + i + " weights");
        }

        /** Writes every pass' bounds and weights into {@code buf} from {@code at}, in the device's layout. */
        void writeTables(ByteBuffer buf, long at) {
            for (int i = 0; i < passes.size(); i++) {
                Pass p = passes.get(i);
                long b = at + boundsAt(i);
                buf.position(Math.toIntExact(b));
                buf.asIntBuffer().put(p.bounds());
                buf.position(Math.toIntExact(b + ImageOpsKernels.align16(ImageOpsKernels.boundsBytes(p))));
                buf.asIntBuffer().put(p.weights());
            }
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%d passes, %d B of RGB, %d B of tables, %d B of intermediate",
                    passes.size(), rgbBytes, tableBytes, intermediateBytes);
        }
    }
}
