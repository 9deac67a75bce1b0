package io.samstream.gpu.cuda;

import java.util.function.IntToLongFunction;

/**
 * The buffers of a launcher that takes a variable number of requests per call: a pinned upload buffer (the requests'
 * tables), a device buffer (the tables, then the results behind them) and a pinned download buffer (the results),
 * each sized for as many requests as the largest call so far. {@link #reserve} grows them (to at least twice the
 * capacity, at least {@code minCapacity}) before a call that needs more; what they held is lost then. Not
 * thread-safe: the owner serializes its calls.
 */
public final class RequestStaging implements AutoCloseable {
    private final CudaContext context;
    private final int minCapacity;
    private final IntToLongFunction upBytes;
    private final IntToLongFunction downBytes;
    private final String upWhat;
    private final String downWhat;
    private int capacity;
    private DeviceMemoryPool device;
    private PinnedBuffer up;
    private PinnedBuffer down;

    /**
     * @param upBytes   upload bytes of n requests; the device buffer holds them, then the download's
     * @param downBytes download bytes of n requests
     * @param upWhat    what the upload holds (for errors), likewise {@code downWhat}
     */
    public RequestStaging(CudaContext context, int minCapacity, IntToLongFunction upBytes, IntToLongFunction downBytes,
                          String upWhat, String downWhat) {
        this.context = context;
        this.minCapacity = minCapacity;
        this.upBytes = upBytes;
        this.downBytes = downBytes;
        this.upWhat = upWhat;
        this.downWhat = downWhat;
    }

    /** Makes the buffers hold {@code n} requests. */
    public void reserve(int n) {
        if (n <= capacity) {
            return;
        }
        int c = Math.max(n, Math.max(minCapacity, 2 * capacity));
        closeBuffers();
        device = new DeviceMemoryPool(context, upBytes.applyAsLong(c) + align16(downBytes.applyAsLong(c)));
        up = new PinnedBuffer(context, upBytes.applyAsLong(c), upWhat);
        down = new PinnedBuffer(context, downBytes.applyAsLong(c), downWhat);
        capacity = c;
    }

    /** The pinned upload buffer (after {@link #reserve}). */
    public PinnedBuffer up() {
        return up;
    }

    /** The device buffer: the uploaded tables from 0, the results after them. */
    public DeviceBuffer device() {
        return device.whole();
    }

    /** The pinned download buffer. */
    public PinnedBuffer down() {
        return down;
    }

    private static long align16(long bytes) {
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
    public void close() {
        closeBuffers();
    }
}
