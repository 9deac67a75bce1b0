package io.samstream.gpu.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;

/** A CUDA event: a point in a stream's work, to wait on from another stream or to time between. */
public final class CudaEvent implements AutoCloseable {
    private final CudaContext context;
    final CUevent event = new CUevent();
    private boolean closed;

    /** @param timing false for events only used for ordering (cheaper to record) */
    public CudaEvent(CudaContext context, boolean timing) {
        this.context = context;
        context.bind();
        Cuda.check(cuEventCreate(event, timing ? CUevent_flags.CU_EVENT_DEFAULT : CUevent_flags.CU_EVENT_DISABLE_TIMING),
                "creating a CUDA event");
    }

    /** Blocks the calling thread until the work before the event's last record has finished. */
    public void synchronize() {
        context.bind();
        Cuda.check(cuEventSynchronize(event), "waiting for a CUDA event");
    }

    /**
     * Records this event on the context's legacy default stream, after the work queued there so far (FFmpeg's CUDA
     * decoder copies its frames there), for a non-blocking stream to wait on.
     */
    public void recordOnLegacyStream() {
        context.bind();
        Cuda.check(cuEventRecord(event, null), "recording an event on the legacy stream");
    }

    /** Milliseconds of GPU time between two recorded (and completed) timing events. */
    public static float elapsedMillis(CudaEvent start, CudaEvent end) {
        float[] ms = new float[1];
        end.context.bind();
        Cuda.check(cuEventElapsedTime(ms, start.event, end.event), "reading the time between two CUDA events");
        return ms[0];
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            context.bind();
            Cuda.check(cuEventDestroy(event), "destroying a CUDA event");
        }
    }
}
