package io.samstream.gpu.cuda.sam;

import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.AppearanceKernels;
import io.samstream.gpu.model.EmbeddingMatcher;
import io.samstream.gpu.model.HostEmbeddingMatcher;
import io.samstream.gpu.model.ImageEmbedding;
import java.nio.FloatBuffer;

/**
 * One stream's {@link EmbeddingMatcher} on the device ({@code match_ops.cuh}): the ring slot is matched in place
 * against the stream's device copy of the previous embedding (one launch, one block per shift), then copied over
 * it; only the {@code (2 range + 1)^2} scores come back. It holds one embedding's worth of device memory (2 MB for
 * SAM's 64 x 64 x 256 in bf16). An embedding that is not a slot of this backend's ring is matched on the host.
 * Launches through {@link AppearanceKernels#matchShifts}.
 */
final class CudaEmbeddingMatcher implements EmbeddingMatcher {
    private final AppearanceKernels appearance;
    private final EmbeddingRing ring;
    private final int side;
    private final int channels;
    private final int range;
    private final CudaStream stream;
    private final DeviceMemoryPool device;
    private final DeviceBuffer previous;
    private final DeviceBuffer scores;
    private final PinnedBuffer down;
    private final HostEmbeddingMatcher host;
    /** The image cells of the embedding in {@link #previous}; -1 when it holds none. */
    private int previousCols = -1;
    private int previousRows = -1;
    private boolean closed;

    CudaEmbeddingMatcher(CudaKernels kernels, EmbeddingRing ring, int side, int channels, int range) {
        if (range < 1) {
            throw new IllegalArgumentException("an embedding matcher needs a range of at least 1 cell, got " + range);
        }
        CudaContext context = kernels.context();
        this.appearance = AppearanceKernels.of(kernels); // a fatbin without the kernel fails here, not at the first frame
        this.ring = ring;
        this.side = side;
        this.channels = channels;
        this.range = range;
        this.host = new HostEmbeddingMatcher(range);
        int shifts = (2 * range + 1) * (2 * range + 1);
        long embeddingBytes = 2L * side * side * channels;
        this.stream = new CudaStream(context);
        this.device = new DeviceMemoryPool(context, align(embeddingBytes) + align(4L * shifts));
        this.previous = device.allocate(embeddingBytes, "previous embedding (camera motion)");
        this.scores = device.allocate(4L * shifts, "shift scores");
        this.down = new PinnedBuffer(context, 4L * shifts, "shift scores");
    }

    @Override
    public int range() {
        return range;
    }

    @Override
    public synchronized double[] match(ImageEmbedding embedding, int cols, int rows) {
        if (closed) {
            return null; // the stream ended while a frame was in flight: no motion rather than a failed wave
        }
        if (cols < 1 || rows < 1 || cols > side || rows > side) {
            throw new IllegalArgumentException("matching " + cols + "x" + rows + " image cells of a " + side + "x"
                    + side + " embedding");
        }
        if (!(embedding instanceof EmbeddingRing.Slot slot) || !slot.belongsTo(ring)) {
            previousCols = -1;
            return host.match(embedding, cols, rows);
        }
        host.close(); // a later foreign embedding must not be matched against an old one
        stream.waitFor(slot.ready());
        boolean same = previousCols == cols && previousRows == rows;
        int shifts = (2 * range + 1) * (2 * range + 1);
        if (same) {
            appearance.matchShifts(stream, previous.address(), slot.buffer().address(), scores.address(), side, channels,
                    cols, rows, range);
            stream.download(scores, 0, down, 0, 4L * shifts);
        }
        stream.copy(slot.buffer(), previous, previous.bytes());
        stream.synchronize();
        previousCols = cols;
        previousRows = rows;
        if (!same) {
            return null;
        }
        FloatBuffer f = down.buffer().asFloatBuffer();
        double[] out = new double[shifts];
        for (int i = 0; i < shifts; i++) {
            out[i] = f.get(i);
        }
        return out;
    }

    private static long align(long bytes) {
        return (bytes + 255) & ~255L;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        down.close();
        device.close();
        stream.close();
    }
}
