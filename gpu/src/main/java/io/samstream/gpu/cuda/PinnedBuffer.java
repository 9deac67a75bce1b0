package io.samstream.gpu.cuda;

import static jcuda.driver.JCudaDriver.cuMemAllocHost;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import jcuda.Pointer;

/**
 * Page-locked host memory ({@code cuMemAllocHost}) for staging uploads and downloads: the only host
 * memory the copy engines can read or write asynchronously. Allocated once and reused; Java code reads
 * and writes it through {@link #buffer()} (little-endian, as the GPU).
 */
public final class PinnedBuffer implements AutoCloseable {
    private final CudaContext context;
    private final Pointer pointer = new Pointer();
    private final long bytes;
    private final ByteBuffer buffer;
    private boolean closed;

    public PinnedBuffer(CudaContext context, long bytes, String what) {
        if (bytes <= 0 || bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("pinned buffer for " + what + " must hold 1 B to 2 GiB, not " + bytes);
        }
        this.context = context;
        this.bytes = bytes;
        context.bind();
        Cuda.check(cuMemAllocHost(pointer, bytes), () -> "allocating " + Cuda.bytes(bytes) + " of pinned host memory for " + what);
        this.buffer = pointer.getByteBuffer(0, bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The whole buffer, position 0, little-endian. A fresh view each call (positions are not shared). */
    public ByteBuffer buffer() {
        ensureOpen();
        return buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN).clear();
    }

    Pointer pointer(long at) {
        ensureOpen();
        if (at < 0 || at > bytes) {
            throw new IndexOutOfBoundsException("offset " + at + " outside pinned buffer of " + bytes + " B");
        }
        return pointer.withByteOffset(at);
    }

    public long bytes() {
        return bytes;
    }

    /** Writes {@code values} as bf16 starting at element {@code index}. */
    public void putBf16(long index, float[] values) {
        putBf16(index, values, 0, values.length);
    }

    /** Writes {@code values[from, from + count)} as bf16 starting at element {@code index} ({@link Bf16#put}). */
    public void putBf16(long index, float[] values, int from, int count) {
        Bf16.put(buffer().asShortBuffer(), Math.toIntExact(index), values, from, count);
    }

    /** Reads {@code count} bf16 values starting at element {@code index}, as floats. */
    public float[] getBf16(long index, int count) {
        float[] out = new float[count];
        getBf16(index, out, 0, count);
        return out;
    }

    /** Reads {@code count} bf16 values from element {@code index} into {@code out[from, from + count)}. */
    public void getBf16(long index, float[] out, int from, int count) {
        Bf16.get(buffer().asShortBuffer(), Math.toIntExact(index), out, from, count);
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("pinned buffer is closed");
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            context.bind();
            Cuda.check(cuMemFreeHost(pointer), "freeing pinned host memory");
        }
    }
}
