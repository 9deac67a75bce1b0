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
        ByteBuffer b = buffer();
        b.position(Math.toIntExact(index * 2));
        for (float v : values) {
            b.putShort(Bf16.fromFloat(v));
        }
    }

    /** Reads {@code count} bf16 values starting at element {@code index}, as floats. */
    public float[] getBf16(long index, int count) {
        ByteBuffer b = buffer();
        b.position(Math.toIntExact(index * 2));
        float[] out = new float[count];
        for (int i = 0; i < count; i++) {
            out[i] = Bf16.toFloat(b.getShort());
        }
        return out;
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
