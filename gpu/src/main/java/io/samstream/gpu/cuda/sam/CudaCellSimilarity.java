package io.samstream.gpu.cuda.sam;

import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.RequestStaging;
import io.samstream.gpu.cuda.kernels.AppearanceKernels;
import io.samstream.gpu.model.EmbeddingPool;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The tracker's appearance maps on the device ({@code appearance_ops.cuh}): each request's ring slot is read in place,
 * all requests of a call in one launch (one warp per cell); only the looks and means go up ({@code 2 C} floats per
 * request) and only the maps come back ({@code cols x rows} floats each). Requests whose embedding is not a slot of
 * this backend's ring are computed on the host ({@link EmbeddingPool#cellSimilarity}). One call at a time.
 * Launches through {@link AppearanceKernels#cellSimilarity}; buffers in a {@link RequestStaging}.
 */
final class CudaCellSimilarity implements AutoCloseable {
    private final AppearanceKernels appearance;
    private final EmbeddingRing ring;
    private final int side;
    private final int channels;
    private final CudaStream stream;
    private final RequestStaging staging;

    CudaCellSimilarity(CudaKernels kernels, EmbeddingRing ring, int side, int channels) {
        this.appearance = AppearanceKernels.of(kernels); // a fatbin without the kernel fails here, not at the first search
        this.ring = ring;
        this.side = side;
        this.channels = channels;
        this.stream = new CudaStream(kernels.context());
        this.staging = new RequestStaging(kernels.context(), 4, this::upBytes, this::downBytes,
                "appearance map requests", "appearance maps");
    }

    /** Bytes of n requests' upload: slot addresses, looks and means, dims (16-byte aligned parts). */
    private long upBytes(int n) {
        return align(8L * n) + align(8L * channels * n) + align(16L * n);
    }

    private long downBytes(int n) {
        return 4L * side * side * n;
    }

    synchronized List<float[]> run(List<EmbeddingPool.CellRequest> requests) {
        List<float[]> out = new ArrayList<>(requests.size());
        List<Integer> onDevice = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
            EmbeddingPool.CellRequest r = requests.get(i);
            if (r.look().length != channels || r.cols() > side || r.rows() > side) {
                throw new IllegalArgumentException("an appearance map of " + r.cols() + "x" + r.rows() + " cells and "
                        + r.look().length + " channels of a " + side + "x" + side + "x" + channels + " embedding");
            }
            boolean device = r.embedding() instanceof EmbeddingRing.Slot slot && slot.belongsTo(ring);
            // A foreign embedding (not this ring's) is mapped on the host.
            out.add(device ? null : EmbeddingPool.cellSimilarity(r.embedding().toTensor(), r.look(), r.mean(), r.cols(),
                    r.rows(), r.windowCols(), r.windowRows()));
            if (device) {
                onDevice.add(i);
            }
        }
        int n = onDevice.size();
        if (n == 0) {
            return out;
        }
        staging.reserve(n);
        ByteBuffer b = staging.up().buffer();
        long refsAt = align(8L * n);
        long dimsAt = refsAt + align(8L * channels * n);
        int cells = 0;
        for (int k = 0; k < n; k++) {
            EmbeddingPool.CellRequest r = requests.get(onDevice.get(k));
            EmbeddingRing.Slot slot = (EmbeddingRing.Slot) r.embedding();
            stream.waitFor(slot.ready());
            b.putLong(8 * k, slot.buffer().address());
            ByteBuffer f = b.duplicate().order(b.order());
            f.position((int) (refsAt + 8L * channels * k));
            f.asFloatBuffer().put(r.look()).put(r.mean());
            int[] dims = {r.cols(), r.rows(), r.windowCols(), r.windowRows()};
            for (int j = 0; j < 4; j++) {
                b.putInt((int) (dimsAt + 16L * k + 4L * j), dims[j]);
            }
            cells = Math.max(cells, r.cols() * r.rows());
        }
        DeviceBuffer all = staging.device();
        stream.upload(staging.up(), 0, all, 0, upBytes(n));
        long outAt = upBytes(n);
        appearance.cellSimilarity(stream, all.address(), all.address() + refsAt, all.address() + dimsAt,
                all.address() + outAt, n, cells, side, channels);
        stream.download(all, outAt, staging.down(), 0, downBytes(n));
        stream.synchronize();
        java.nio.FloatBuffer maps = staging.down().buffer().asFloatBuffer();
        for (int k = 0; k < n; k++) {
            EmbeddingPool.CellRequest r = requests.get(onDevice.get(k));
            float[] map = new float[r.cols() * r.rows()];
            maps.get(k * side * side, map);
            out.set(onDevice.get(k), map);
        }
        return out;
    }

    private static long align(long bytes) {
        return (bytes + 15) & ~15L;
    }

    @Override
    public synchronized void close() {
        staging.close();
        stream.close();
    }
}
