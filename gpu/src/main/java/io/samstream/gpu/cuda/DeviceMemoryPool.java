package io.samstream.gpu.cuda;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuPointerGetAttribute;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUpointer_attribute;
import jcuda.driver.CUresult;

/**
 * All the device memory the backend uses, taken with one {@code cuMemAlloc} when the backend starts and
 * handed out by bump allocation (see {@link BumpAllocator}). Nothing is allocated from the driver
 * inside a forward pass: weights are allocated once, and scratch space for a pass is allocated after a
 * {@link #mark()} and given back with {@link #release(long)}. Not thread-safe: one owner allocates.
 */
public final class DeviceMemoryPool implements AutoCloseable {
    private final CudaContext context;
    private final CUdeviceptr base = new CUdeviceptr();
    private final long baseAddress;
    private final BumpAllocator allocator;
    private boolean closed;

    public DeviceMemoryPool(CudaContext context, long capacityBytes) {
        this.context = context;
        this.allocator = new BumpAllocator(BumpAllocator.alignUp(capacityBytes));
        context.bind();
        Cuda.check(cuMemAlloc(base, allocator.capacity()),
                () -> "allocating the " + Cuda.bytes(allocator.capacity()) + " device memory pool on "
                        + context.info().describe());
        // The number itself (JCuda keeps it private), for the TMA tensor maps; -1 if the driver will not say, which
        // only those refuse (DeviceBuffer.address), so that nothing else depends on this query.
        long[] address = new long[1];
        int r = cuPointerGetAttribute(Pointer.to(address), CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, base);
        this.baseAddress = r == CUresult.CUDA_SUCCESS ? address[0] : -1;
    }

    /** A range of {@code bytes}, 256-byte aligned, holding garbage until written. */
    public DeviceBuffer allocate(long bytes, String what) {
        ensureOpen();
        long offset = allocator.allocate(bytes, what);
        return new DeviceBuffer(base, baseAddress, offset, bytes, what);
    }

    /** The whole pool as one buffer (for a pool that holds one thing). */
    public DeviceBuffer whole() {
        ensureOpen();
        return new DeviceBuffer(base, baseAddress, 0, allocator.capacity(), "device memory pool");
    }

    /** A range for {@code count} bf16 values. */
    public DeviceBuffer allocateBf16(long count, String what) {
        return allocate(count * 2, what);
    }

    public long mark() {
        return allocator.mark();
    }

    public void release(long mark) {
        allocator.release(mark);
    }

    public long used() {
        return allocator.used();
    }

    public long peak() {
        return allocator.peak();
    }

    public long capacity() {
        return allocator.capacity();
    }

    public CudaContext context() {
        return context;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("device memory pool is closed");
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            context.bind();
            Cuda.check(cuMemFree(base), "freeing the device memory pool");
        }
    }
}
