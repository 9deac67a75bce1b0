package io.samstream.gpu.cuda.sam;

import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.ImageOpsKernels;
import io.samstream.gpu.image.DeviceYuvImage;
import io.samstream.gpu.image.FrameImage;
import io.samstream.gpu.image.HostYuvImage;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.PillowBilinearResize.Pass;
import io.samstream.gpu.image.PillowBilinearResize;
import io.samstream.gpu.image.ResizeLongestSide;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.image.SamPreprocessor;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * SAM's pre-processing on the GPU: 8-bit RGB frames of any size (or GPU frames from NVDEC, converted to
 * RGB in place by one kernel, nothing uploaded but the resize tables; or a CPU decoder's YUV planes, uploaded
 * as they came and converted by the same kernel) to the encoder's fp32 {@code [B, 3, S, S]}
 * input, with the bytes of {@link io.samstream.gpu.image.FramePreprocessor} (Pillow's resize passes with
 * the weights {@link PillowBilinearResize#passes} computes on the host, then {@link SamPreprocessor}'s
 * normalization and padding; image_ops.cuh).
 *
 * <p>Each frame is copied into one of the pinned staging slots together with its pass tables and uploaded
 * asynchronously; the host waits for a slot only when it comes round again (an event per slot). With two
 * batches' worth of slots, the next batch is staged while the GPU still runs the one before. The device scratch (the frame, the
 * 8-bit intermediate of a two-pass resize, the tables) holds one frame: the stream runs uploads and
 * kernels in order. Staging and scratch grow (after a stream synchronization) when a larger frame comes;
 * the frames of a stream keep their size, so this happens at the first frames only.
 *
 * <p>Not thread-safe: the owner ({@link CudaSamBackend}) serializes calls.
 */
public final class GpuFramePreprocessor implements AutoCloseable {
    private final CudaContext context;
    private final ImageOpsKernels kernels;
    private final int inputSize;
    private final float[] mean = SamPreprocessor.pixelMean();
    private final float[] std = SamPreprocessor.pixelStd();
    private final PinnedBuffer[] staging;
    private final CudaEvent[] uploaded;
    /** Recorded on the legacy default stream before a GPU frame is read. */
    private final CudaEvent decoded;
    private DeviceMemoryPool scratch;
    private int nextSlot;
    private boolean closed;

    public GpuFramePreprocessor(CudaContext context, ImageOpsKernels kernels, int inputSize) {
        this(context, kernels, inputSize, 2);
    }

    /** @param slots pinned staging slots (frames staged ahead of the GPU); pinned memory is taken at first use */
    public GpuFramePreprocessor(CudaContext context, ImageOpsKernels kernels, int inputSize, int slots) {
        if (inputSize <= 0) {
            throw new IllegalArgumentException("input size must be positive, got " + inputSize);
        }
        if (slots < 1) {
            throw new IllegalArgumentException("at least one staging slot, got " + slots);
        }
        this.context = context;
        this.kernels = kernels;
        this.inputSize = inputSize;
        this.staging = new PinnedBuffer[slots];
        this.uploaded = new CudaEvent[slots];
        for (int i = 0; i < slots; i++) {
            uploaded[i] = new CudaEvent(context, false);
        }
        this.decoded = new CudaEvent(context, false);
    }

    public int inputSize() {
        return inputSize;
    }

    /**
     * Queues the pre-processing of {@code frames} into image slots {@code 0 .. frames.size() - 1} of
     * {@code images} (fp32 {@code [B, 3, S, S]}, B at least the number of frames) on {@code stream} (always the
     * same stream: the device scratch is reused in stream order). Returns
     * when the last frame is staged; the results are there once the stream gets past this point.
     */
    public void enqueue(CudaStream stream, List<? extends FrameImage> frames, DeviceBuffer images) {
        if (closed) {
            throw new IllegalStateException("the GPU frame pre-processor is closed");
        }
        if (frames.isEmpty()) {
            throw new IllegalArgumentException("a batch needs at least one frame");
        }
        long imageBytes = 3L * inputSize * inputSize * 4;
        if (images.bytes() < imageBytes * frames.size()) {
            throw new IllegalArgumentException(frames.size() + " frames need " + imageBytes * frames.size() + " B of "
                    + "encoder input, " + images + " holds " + images.bytes());
        }
        for (int i = 0; i < frames.size(); i++) {
            FrameImage frame = frames.get(i);
            if (frame == null) {
                throw new IllegalArgumentException("frame " + i + " of the batch is null");
            }
            enqueueFrame(stream, frame, images.slice(i * imageBytes, imageBytes, "encoder input " + i));
        }
    }

    private void enqueueFrame(CudaStream stream, FrameImage frame, DeviceBuffer out) {
        ImageSize size = ResizeLongestSide.preprocessShape(frame.height(), frame.width(), inputSize);
        List<Pass> passes = PillowBilinearResize.passes(frame.width(), frame.height(), size.width(), size.height());
        // Layout, the same in the pinned slot and on the device: the frame as it came (RGB bytes, or a CPU
        // decoder's YUV planes; nothing for NVDEC's frames, already on the device) | tables of each pass; then,
        // on the device only, the RGB a YUV frame is converted to | the 8-bit output of the first of two passes.
        long rgbBytes = 3L * frame.width() * frame.height();
        long payload = frame instanceof RgbImage ? rgbBytes
                : frame instanceof HostYuvImage yuv ? yuv.planeBytes() : 0;
        long frameBytes = ImageOpsKernels.align16(payload);
        long tables = 0;
        for (Pass p : passes) {
            tables += ImageOpsKernels.tableBytes(p);
        }
        long staged = frameBytes + tables;
        long converted = frame instanceof RgbImage ? 0 : ImageOpsKernels.align16(rgbBytes);
        long intermediate = passes.size() == 2 ? 3L * passes.get(0).outWidth() * passes.get(0).outHeight() : 0;

        int slot = nextSlot;
        nextSlot = (nextSlot + 1) % staging.length;
        PinnedBuffer pinned = stagingFor(slot, staged, stream);
        DeviceMemoryPool pool = scratchFor(staged + converted + ImageOpsKernels.align16(intermediate) + 3 * BumpAllocator.ALIGNMENT, stream);

        ByteBuffer buf = pinned.buffer();
        if (frame instanceof RgbImage rgb) {
            buf.put(rgb.rgb());
        } else if (frame instanceof HostYuvImage yuv) {
            yuv.planes().accept(buf);
            if (buf.position() != payload) {
                throw new IllegalStateException("a " + frame.width() + "x" + frame.height() + " I420 frame wrote "
                        + buf.position() + " B of planes, expected " + payload);
            }
        }
        long at = frameBytes;
        for (Pass p : passes) {
            buf.position((int) at);
            buf.asIntBuffer().put(p.bounds());
            at += ImageOpsKernels.align16(ImageOpsKernels.boundsBytes(p));
            buf.position((int) at);
            buf.asIntBuffer().put(p.weights());
            at += ImageOpsKernels.align16(ImageOpsKernels.weightsBytes(p));
        }
        pool.release(0);
        DeviceBuffer device = pool.allocate(staged, "staged frame");
        stream.upload(pinned, 0, device, 0, staged);
        stream.record(uploaded[slot]);

        DeviceBuffer src;
        if (frame instanceof HostYuvImage yuv) {
            src = pool.allocate(converted, "converted frame");
            kernels.yuvToRgb8(stream, yuv, device.slice(0, payload, "frame planes"), src);
        } else if (frame instanceof DeviceYuvImage yuv) {
            // The decoder wrote the planes on the context's legacy stream: this stream waits for that first.
            afterLegacyStream(stream);
            src = pool.allocate(converted, "converted frame");
            kernels.yuvToRgb8(stream, yuv, src);
        } else {
            src = device.slice(0, rgbBytes, "frame");
        }
        at = frameBytes;
        DeviceBuffer[] bounds = new DeviceBuffer[passes.size()];
        DeviceBuffer[] weights = new DeviceBuffer[passes.size()];
        for (int i = 0; i < passes.size(); i++) {
            Pass p = passes.get(i);
            bounds[i] = device.slice(at, ImageOpsKernels.boundsBytes(p), "pass bounds");
            at += ImageOpsKernels.align16(ImageOpsKernels.boundsBytes(p));
            weights[i] = device.slice(at, ImageOpsKernels.weightsBytes(p), "pass weights");
            at += ImageOpsKernels.align16(ImageOpsKernels.weightsBytes(p));
        }
        int w = size.width();
        int h = size.height();
        switch (passes.size()) {
            case 0 -> kernels.pillowPassNormalize(stream, src, out, w, h, inputSize, null, null, null, mean, std);
            case 1 -> kernels.pillowPassNormalize(stream, src, out, w, h, inputSize, passes.get(0), bounds[0], weights[0],
                    mean, std);
            default -> {
                DeviceBuffer mid = pool.allocate(intermediate, "resize intermediate");
                kernels.pillowPass(stream, src, mid, passes.get(0), bounds[0], weights[0]);
                kernels.pillowPassNormalize(stream, mid, out, w, h, inputSize, passes.get(1), bounds[1], weights[1],
                        mean, std);
            }
        }
    }

    /**
     * Makes {@code stream} (non-blocking) wait for the work queued so far on the context's legacy default
     * stream, where FFmpeg's CUDA decoder copies its frames.
     */
    private void afterLegacyStream(CudaStream stream) {
        decoded.recordOnLegacyStream();
        stream.waitFor(decoded);
    }

    /** The pinned slot, once its previous upload is done; reallocated larger when needed. */
    private PinnedBuffer stagingFor(int slot, long bytes, CudaStream stream) {
        uploaded[slot].synchronize();
        PinnedBuffer b = staging[slot];
        if (b == null || b.bytes() < bytes) {
            if (bytes > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("a frame of " + bytes + " B is too large to stage (2 GiB at most)");
            }
            if (b != null) {
                b.close();
            }
            staging[slot] = null;
            staging[slot] = new PinnedBuffer(context, Math.min(Integer.MAX_VALUE, Math.max(bytes, bytes / 4 * 5)),
                    "frame staging " + slot);
        }
        return staging[slot];
    }

    /** The device scratch, reallocated larger (after the stream's queued work) when needed. */
    private DeviceMemoryPool scratchFor(long bytes, CudaStream stream) {
        if (scratch == null || scratch.capacity() < bytes) {
            stream.synchronize();
            if (scratch != null) {
                scratch.close();
                scratch = null;
            }
            scratch = new DeviceMemoryPool(context, bytes / 4 * 5);
        }
        return scratch;
    }

    /** Bytes of device scratch and pinned staging held now. */
    public long bytesHeld() {
        long total = scratch == null ? 0 : scratch.capacity();
        for (PinnedBuffer b : staging) {
            total += b == null ? 0 : b.bytes();
        }
        return total;
    }

    /** Frees the buffers; the owner synchronizes its stream first. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < staging.length; i++) {
            uploaded[i].synchronize();
            uploaded[i].close();
            if (staging[i] != null) {
                staging[i].close();
            }
        }
        decoded.close();
        if (scratch != null) {
            scratch.close();
        }
    }
}
