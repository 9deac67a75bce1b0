package io.samstream.gpu.cuda;

import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD16Async;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;
import static jcuda.driver.JCudaDriver.cuStreamWaitEvent;

import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * A CUDA stream (non-blocking: no implicit ordering with the legacy default stream). Copies and kernel
 * launches queued here run in order and return to the caller at once; {@link #synchronize()} or an
 * event is the only way to know they have finished.
 */
public final class CudaStream implements AutoCloseable {
    private final CudaContext context;
    final CUstream stream = new CUstream();
    private boolean closed;

    public CudaStream(CudaContext context) {
        this.context = context;
        context.bind();
        Cuda.check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "creating a CUDA stream");
    }

    public CudaContext context() {
        return context;
    }

    /** Queues a copy of {@code bytes} from pinned host memory to device memory. */
    public void upload(PinnedBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
        checkRange(bytes, srcOffset, src.bytes(), dstOffset, dst.bytes(), "upload to " + dst.label());
        context.bind();
        Cuda.check(cuMemcpyHtoDAsync(dst.pointer(dstOffset), src.pointer(srcOffset), bytes, stream),
                () -> "queueing an upload of " + Cuda.bytes(bytes) + " to " + dst.label());
    }

    /** Queues a copy of {@code bytes} from device memory to pinned host memory. */
    public void download(DeviceBuffer src, long srcOffset, PinnedBuffer dst, long dstOffset, long bytes) {
        checkRange(bytes, srcOffset, src.bytes(), dstOffset, dst.bytes(), "download of " + src.label());
        context.bind();
        Cuda.check(cuMemcpyDtoHAsync(dst.pointer(dstOffset), src.pointer(srcOffset), bytes, stream),
                () -> "queueing a download of " + Cuda.bytes(bytes) + " from " + src.label());
    }

    /** Queues a device-to-device copy. */
    public void copy(DeviceBuffer src, DeviceBuffer dst, long bytes) {
        checkRange(bytes, 0, src.bytes(), 0, dst.bytes(), "copy " + src.label() + " -> " + dst.label());
        context.bind();
        Cuda.check(cuMemcpyDtoDAsync(dst.pointer(), src.pointer(), bytes, stream),
                () -> "queueing a copy of " + Cuda.bytes(bytes) + " to " + dst.label());
    }

    /** Queues filling the whole buffer with one 16-bit pattern (e.g. {@link Bf16#NAN} to poison an output). */
    public void fill16(DeviceBuffer dst, short pattern) {
        context.bind();
        Cuda.check(cuMemsetD16Async(dst.pointer(), pattern, dst.bytes() / 2, stream),
                () -> "queueing a fill of " + dst.label());
    }

    /** Records {@code event} at this point of the stream. */
    public void record(CudaEvent event) {
        context.bind();
        Cuda.check(cuEventRecord(event.event, stream), "recording a CUDA event");
    }

    /** Makes later work on this stream wait until {@code event} (recorded on any stream) has happened. */
    public void waitFor(CudaEvent event) {
        context.bind();
        Cuda.check(cuStreamWaitEvent(stream, event.event, 0), "making a stream wait for an event");
    }

    /** Blocks until everything queued so far has finished; reports errors of earlier kernels too. */
    public void synchronize() {
        context.bind();
        Cuda.check(cuStreamSynchronize(stream), "waiting for a CUDA stream (errors of earlier kernels or copies show here)");
    }

    private static void checkRange(long bytes, long srcOff, long srcLen, long dstOff, long dstLen, String what) {
        if (bytes < 0 || srcOff < 0 || dstOff < 0 || srcOff + bytes > srcLen || dstOff + bytes > dstLen) {
            throw new IndexOutOfBoundsException(what + ": " + bytes + " B from offset " + srcOff + " of " + srcLen
                    + " B to offset " + dstOff + " of " + dstLen + " B");
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            context.bind();
            Cuda.check(cuStreamDestroy(stream), "destroying a CUDA stream");
        }
    }
}
