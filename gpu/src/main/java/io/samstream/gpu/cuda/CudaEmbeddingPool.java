package io.samstream.gpu.cuda;

import static jcuda.driver.JCudaDriver.cuLaunchKernel;

import io.samstream.gpu.model.EmbeddingPool;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import jcuda.Pointer;

/**
 * The tracker's appearance pooling on the device ({@code pool_ops.cuh}): the mean of each request's ring slot
 * under its cell weights, all requests of a wave in one launch; only the weights go up (a few KB per mask)
 * and only the means come back ({@code C} floats each). Requests whose embedding is not a slot of this
 * backend's ring are pooled on the host ({@link EmbeddingPool#pool}). One call at a time.
 */
final class CudaEmbeddingPool implements AutoCloseable {
    static final String KERNEL = "samstream_pool_embedding";
    private static final int THREADS = 256;

    private final CudaContext context;
    private final CudaKernels kernels;
    private final EmbeddingRing ring;
    private final int side;
    private final int channels;
    private final CudaStream stream;
    private int capacity;
    private DeviceMemoryPool device;
    private PinnedBuffer up;
    private PinnedBuffer down;

    CudaEmbeddingPool(CudaKernels kernels, EmbeddingRing ring, int side, int channels) {
        this.context = kernels.context();
        this.kernels = kernels;
        this.ring = ring;
        this.side = side;
        this.channels = channels;
        this.stream = new CudaStream(context);
        kernels.function(KERNEL); // a fatbin without it fails here, not at the first wave
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
        reserve(n);
        ByteBuffer b = up.buffer();
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
        DeviceBuffer all = device.whole();
        stream.upload(up, 0, all, 0, upBytes(n));
        long outAt = upBytes(n);
        // samstream_pool_embedding(embeddings, weights, bounds, out, side, channels)
        Pointer params = Pointer.to(Pointer.to(new long[] {all.address()}),
                Pointer.to(new long[] {all.address() + weightsAt}), Pointer.to(new long[] {all.address() + boundsAt}),
                Pointer.to(new long[] {all.address() + outAt}), Pointer.to(new int[] {side}),
                Pointer.to(new int[] {channels}));
        context.bind();
        Cuda.check(cuLaunchKernel(kernels.function(KERNEL), n, 1, 1, THREADS, 1, 1, 0, stream.stream, params, null),
                () -> "launching " + KERNEL + " for " + n + " masks");
        stream.download(all, outAt, down, 0, 4L * channels * n);
        stream.synchronize();
        java.nio.FloatBuffer means = down.buffer().asFloatBuffer();
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

    private void reserve(int n) {
        if (n <= capacity) {
            return;
        }
        int c = Math.max(n, Math.max(16, 2 * capacity));
        closeBuffers();
        device = new DeviceMemoryPool(context, upBytes(c) + align(4L * channels * c));
        up = new PinnedBuffer(context, upBytes(c), "appearance pooling requests");
        down = new PinnedBuffer(context, 4L * channels * c, "appearance means");
        capacity = c;
    }

    private static long align(long bytes) {
        return (bytes + 15) & ~15L;
    }

    private void closeBuffers() {
        if (device != null) {
            device.close();
            up.close();
            down.close();
        }
    }

    @Override
    public synchronized void close() {
        closeBuffers();
        stream.close();
    }
}
