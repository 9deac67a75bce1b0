package io.samstream.gpu.cuda;

/**
 * What a model part that owns a GPU of its own needs: the context on one device, its kernels, one stream, one pinned
 * staging buffer and one device memory pool. Opening is all or nothing (whatever was opened before a failure is
 * closed again, the context last); {@link #close} frees everything in the reverse order.
 */
public final class GpuWorkspace implements AutoCloseable {
    private final CudaContext context;
    private final CudaKernels kernels;
    private final CudaStream stream;
    private final PinnedBuffer staging;
    private final DeviceMemoryPool pool;
    private boolean closed;

    private GpuWorkspace(CudaContext context, CudaKernels kernels, CudaStream stream, PinnedBuffer staging,
            DeviceMemoryPool pool) {
        this.context = context;
        this.kernels = kernels;
        this.stream = stream;
        this.staging = staging;
        this.pool = pool;
    }

    /**
     * Opens GPU {@code ordinal} with a staging buffer of {@code stagingBytes} (named {@code what} in errors) and a
     * pool of {@code poolBytes}.
     */
    public static GpuWorkspace open(int ordinal, long stagingBytes, long poolBytes, String what) {
        CudaContext context = CudaContext.open(ordinal);
        CudaKernels kernels = null;
        CudaStream stream = null;
        PinnedBuffer staging = null;
        try {
            kernels = new CudaKernels(context);
            stream = new CudaStream(context);
            staging = new PinnedBuffer(context, stagingBytes, what + " staging");
            return new GpuWorkspace(context, kernels, stream, staging, new DeviceMemoryPool(context, poolBytes));
        } catch (RuntimeException e) {
            try {
                if (staging != null) {
                    staging.close();
                }
                if (stream != null) {
                    stream.close();
                }
                if (kernels != null) {
                    kernels.close();
                }
            } finally {
                context.close();
            }
            throw e;
        }
    }

    public CudaContext context() {
        return context;
    }

    public CudaKernels kernels() {
        return kernels;
    }

    public CudaStream stream() {
        return stream;
    }

    public PinnedBuffer staging() {
        return staging;
    }

    public DeviceMemoryPool pool() {
        return pool;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            pool.close();
            staging.close();
            stream.close();
            kernels.close();
        } finally {
            context.close();
        }
    }
}
