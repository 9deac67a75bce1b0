package io.samstream.gpu.cuda;

import static jcuda.driver.JCudaDriver.cuGraphDestroy;
import static jcuda.driver.JCudaDriver.cuGraphExecDestroy;
import static jcuda.driver.JCudaDriver.cuGraphInstantiate;
import static jcuda.driver.JCudaDriver.cuGraphLaunch;
import static jcuda.driver.JCudaDriver.cuGraphUpload;
import static jcuda.driver.JCudaDriver.cuStreamBeginCapture;
import static jcuda.driver.JCudaDriver.cuStreamEndCapture;

import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUresult;
import jcuda.driver.CUstreamCaptureMode;

/**
 * A CUDA graph captured from the work a piece of code queues on a stream, instantiated once and replayed
 * with one launch. The captured launches keep the argument values (pointers, sizes) they had at capture,
 * so replaying is only right while the buffers they name stay where they are (a fixed device pool).
 */
public final class CudaGraph implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CudaGraph.class);

    private final CudaContext context;
    private final CUgraph graph = new CUgraph();
    private final CUgraphExec exec = new CUgraphExec();
    private boolean closed;

    private CudaGraph(CudaContext context) {
        this.context = context;
    }

    /** Attempts at a capture that another thread's device-wide call (a free, a context sync) invalidated. */
    static final int CAPTURE_ATTEMPTS = 3;

    /**
     * Captures what {@code work} queues on {@code stream} (nothing runs during the capture) and instantiates
     * it. If {@code work} throws, the capture is ended and discarded and the exception passes on. A capture that
     * a call on another thread invalidated ({@code CUDA_ERROR_STREAM_CAPTURE_INVALIDATED}: FFmpeg's NVDEC frees
     * its buffers and synchronizes its context as streams end) is made again, up to {@link #CAPTURE_ATTEMPTS}
     * times: {@code work} only queues launches on fixed buffers, so running it again queues the same graph.
     */
    public static CudaGraph capture(CudaStream stream, Runnable work, String what) {
        for (int attempt = 1; ; attempt++) {
            try {
                return captureOnce(stream, work, what);
            } catch (CudaException e) {
                if (e.result() != CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED || attempt == CAPTURE_ATTEMPTS) {
                    throw e;
                }
                LOG.warn("capturing {} was invalidated by a call on another thread; capturing again ({} of {})", what,
                        attempt + 1, CAPTURE_ATTEMPTS);
            }
        }
    }

    private static CudaGraph captureOnce(CudaStream stream, Runnable work, String what) {
        CudaContext ctx = stream.context();
        ctx.bind();
        CudaGraph g = new CudaGraph(ctx);
        // Thread-local: other threads' unrelated CUDA calls may go on during the capture.
        Cuda.check(cuStreamBeginCapture(stream.stream, CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                () -> "starting to capture " + what + " into a CUDA graph");
        try {
            work.run();
        } catch (RuntimeException | Error e) {
            CUgraph partial = new CUgraph();
            if (cuStreamEndCapture(stream.stream, partial) == 0) {
                cuGraphDestroy(partial);
            }
            throw e;
        }
        Cuda.check(cuStreamEndCapture(stream.stream, g.graph), () -> "ending the capture of " + what);
        try {
            Cuda.check(cuGraphInstantiate(g.exec, g.graph, 0), () -> "instantiating the CUDA graph of " + what);
            Cuda.check(cuGraphUpload(g.exec, stream.stream), () -> "uploading the CUDA graph of " + what);
        } catch (RuntimeException e) {
            cuGraphDestroy(g.graph);
            throw e;
        }
        return g;
    }

    /** Queues one replay of the graph on {@code stream}. */
    public void launch(CudaStream stream) {
        if (closed) {
            throw new IllegalStateException("the CUDA graph is closed");
        }
        context.bind();
        Cuda.check(cuGraphLaunch(exec, stream.stream), "launching a CUDA graph");
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            context.bind();
            Cuda.check(cuGraphExecDestroy(exec), "destroying a CUDA graph instance");
            Cuda.check(cuGraphDestroy(graph), "destroying a CUDA graph");
        }
    }
}
