package io.samstream.gpu.cuda;

import static jcuda.driver.JCudaDriver.cuLaunchKernel;

import io.samstream.gpu.model.EmbeddingPool;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import jcuda.Pointer;

/**
 * The tracker's appearance maps on the device ({@code appearance_ops.cuh}): each request's ring slot is read in place,
 * all requests of a call in one launch (one warp per cell); only the looks and means go up ({@code 2 C} floats per
 * request) and only the maps come back ({@code cols x rows} floats each). Requests whose embedding is not a slot of
 * this backend's ring are computed on the host ({@link EmbeddingPool#cellSimilarity}). One call at a time.
 */
final class CudaCellSimilarity implements AutoCloseable {
    static final String KERNEL = "samstream_cell_similarity";
    private static final int THREADS = 256;
    private static final int WARPS = THREADS / 32;

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

    CudaCellSimilarity(CudaKernels kernels, EmbeddingRing ring, int side, int channels) {
        this.context = kernels.context();
        this.kernels = kernels;
        this.ring = ring;
        this.side = side;
        this.channels = channels;
        this.stream = new CudaStream(context);
        kernels.function(KERNEL); // a fatbin without it fails here, not at the first search
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
        reserve(n);
        ByteBuffer b = up.buffer();
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
        DeviceBuffer all = device.whole();
        stream.upload(up, 0, all, 0, upBytes(n));
        long outAt = upBytes(n);
        int blocks = (cells + WARPS - 1) / WARPS;
        // samstream_cell_similarity(embeddings, refs, dims, out, side, channels)
        Pointer params = Pointer.to(Pointer.to(new long[] {all.address()}),
                Pointer.to(new long[] {all.address() + refsAt}), Pointer.to(new long[] {all.address() + dimsAt}),
                Pointer.to(new long[] {all.address() + outAt}), Pointer.to(new int[] {side}),
                Pointer.to(new int[] {channels}));
        context.bind();
        Cuda.check(cuLaunchKernel(kernels.function(KERNEL), blocks, n, 1, THREADS, 1, 1, 0, stream.stream, params,
                null), () -> "launching " + KERNEL + " for " + n + " appearance maps");
        stream.download(all, outAt, down, 0, downBytes(n));
        stream.synchronize();
        java.nio.FloatBuffer maps = down.buffer().asFloatBuffer();
        for (int k = 0; k < n; k++) {
            EmbeddingPool.CellRequest r = requests.get(onDevice.get(k));
            float[] map = new float[r.cols() * r.rows()];
            maps.get(k * side * side, map);
            out.set(onDevice.get(k), map);
        }
        return out;
    }

    private void reserve(int n) {
        if (n <= capacity) {
            return;
        }
        int c = Math.max(n, Math.max(4, 2 * capacity));
        closeBuffers();
        device = new DeviceMemoryPool(context, upBytes(c) + align(downBytes(c)));
        up = new PinnedBuffer(context, upBytes(c), "appearance map requests");
        down = new PinnedBuffer(context, downBytes(c), "appearance maps");
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
