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
 * The tracker's appearance pooling on the device ({@code pool_ops.cuh}): the mean of each request's ring slot
 * under its cell weights, all requests of a wave in one launch; only the weights go up (a few KB per mask)
 * and only the means come back ({@code C} floats each). Requests whose embedding is not a slot of this
 * backend's ring are pooled on the host ({@link EmbeddingPool#pool}). One call at a time. Launches through
 * {@link AppearanceKernels#poolEmbedding}; buffers in a {@link RequestStaging}.
 */
final class CudaEmbeddingPool implements AutoCloseable {
    private final AppearanceKernels appearance;
    private final EmbeddingRing ring;
    private final int side;
    private final int channels;
    private final CudaStream stream;
    private final RequestStaging staging;

    CudaEmbeddingPool(CudaKernels kernels, EmbeddingRing ring, int side, int channels) {
        this.appearance = AppearanceKernels.of(kernels); // a fatbin without the kernel fails here, not at the first wave
        this.ring = ring;
        this.side = side;
        this.channels = channels;
        this.stream = new CudaStream(kernels.context());
        this.staging = new RequestStaging(kernels.context(), 16, this::upBytes, n -> 4L * channels * n,
                "appearance pooling requests", "appearance means");
    }

    /** Bytes of one request's upload: its slot's address, its bounds, its weights (16-byte aligned parts). */
    private long upBytes(int n) {
        return align(8L * n) + align(16L * n) + align(4L * side * side * n);
    }

    synchronized List<float[]> pool(List<EmbeddingPool.Request> requests) {
        List<float[]> out = new ArrayList<>(requests.size());
        List<Integer> onDevice = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
            EmbeddingPool.Request r = requests.get(i);
            if (r.weights().length != side * side) {
                throw new IllegalArgumentException("pooling weights have " + r.weights().length + " values for an "
                        + "embedding of " + side + "x" + side + " cells");
            }
            boolean device = r.embedding() instanceof EmbeddingRing.Slot slot && slot.belongsTo(ring);
            // A foreign embedding (not this ring's) is pooled on the host.
            out.add(device ? null : EmbeddingPool.pool(r.embedding().toTensor(), r.weights()));
            if (device && nonZero(r.weights())) {
                onDevice.add(i);
            }
        }
        int n = onDevice.size();
        if (n == 0) {
            return out;
        }
        staging.reserve(n);
        ByteBuffer b = staging.up().buffer();
        long boundsAt = align(8L * n);
        long weightsAt = boundsAt + align(16L * n);
        for (int k = 0; k < n; k++) {
            EmbeddingPool.Request r = requests.get(onDevice.get(k));
            EmbeddingRing.Slot slot = (EmbeddingRing.Slot) r.embedding();
            stream.waitFor(slot.ready());
            b.putLong(8 * k, slot.buffer().address());
            int[] bounds = bounds(r.weights());
            for (int j = 0; j < 4; j++) {
                b.putInt((int) (boundsAt + 16L * k + 4L * j), bounds[j]);
            }
            ByteBuffer w = b.duplicate().order(b.order());
            w.position((int) (weightsAt + 4L * side * side * k));
            w.asFloatBuffer().put(r.weights());
        }
        DeviceBuffer all = staging.device();
        stream.upload(staging.up(), 0, all, 0, upBytes(n));
        long outAt = upBytes(n);
        appearance.poolEmbedding(stream, all.address(), all.address() + weightsAt, all.address() + boundsAt,
                all.address() + outAt, n, side, channels);
        stream.download(all, outAt, staging.down(), 0, 4L * channels * n);
        stream.synchronize();
        java.nio.FloatBuffer means = staging.down().buffer().asFloatBuffer();
        for (int k = 0; k < n; k++) {
            float[] mean = new float[channels];
            means.get(k * channels, mean);
            out.set(onDevice.get(k), mean);
        }
        return out;
    }

    private static boolean nonZero(float[] w) {
        for (float v : w) {
            if (v != 0) {
                return true;
            }
        }
        return false;
    }

    /** {@code [y0, y1, x0, x1]} (ends exclusive) of the cells with a non-zero weight. */
    private int[] bounds(float[] w) {
        int y0 = side;
        int y1 = 0;
        int x0 = side;
        int x1 = 0;
        for (int y = 0; y < side; y++) {
            for (int x = 0; x < side; x++) {
                if (w[y * side + x] != 0) {
                    y0 = Math.min(y0, y);
                    y1 = Math.max(y1, y + 1);
                    x0 = Math.min(x0, x);
                    x1 = Math.max(x1, x + 1);
                }
            }
        }
        return new int[] {y0, y1, x0, x1};
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
