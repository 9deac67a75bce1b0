package io.samstream.gpu.cuda;

/**
 * The arithmetic of {@link DeviceMemoryPool}, apart from the GPU so that it can be tested anywhere:
 * offsets handed out in order, each aligned to {@link #ALIGNMENT} bytes, released only by rolling back
 * to a {@link #mark()} (stack discipline: a forward pass takes its scratch space and gives it all back).
 */
public final class BumpAllocator {
    /** 256 B: cudaMalloc's own alignment, and more than any vector load needs. */
    public static final long ALIGNMENT = 256;

    private final long capacity;
    private long top;
    private long peak;

    public BumpAllocator(long capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        this.capacity = capacity;
    }

    public static long alignUp(long n) {
        return (n + ALIGNMENT - 1) & -ALIGNMENT;
    }

    /**
     * Reserves {@code bytes} and returns their offset.
     *
     * @param what what the memory is for, named in the error when the pool is too small
     */
    public long allocate(long bytes, String what) {
        if (bytes < 0) {
            throw new IllegalArgumentException("negative size " + bytes + " for " + what);
        }
        long offset = top;
        long end = offset + alignUp(Math.max(bytes, 1));
        if (end > capacity) {
            throw new CudaException("device memory pool exhausted: " + what + " needs " + Cuda.bytes(bytes) + ", "
                    + Cuda.bytes(capacity - offset) + " of " + Cuda.bytes(capacity)
                    + " left; size the pool larger (peak so far " + Cuda.bytes(peak) + ")");
        }
        top = end;
        peak = Math.max(peak, top);
        return offset;
    }

    /** The current top, to hand to {@link #release(long)} later. */
    public long mark() {
        return top;
    }

    /** Frees everything allocated after {@code mark} was taken. */
    public void release(long mark) {
        if (mark < 0 || mark > top || (mark & (ALIGNMENT - 1)) != 0) {
            throw new IllegalArgumentException("not a mark of this pool: " + mark + " (top " + top + ")");
        }
        top = mark;
    }

    public long used() {
        return top;
    }

    public long peak() {
        return peak;
    }

    public long capacity() {
        return capacity;
    }
}
