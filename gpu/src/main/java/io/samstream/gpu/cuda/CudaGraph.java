package io.samstream.gpu.cuda;

import static jcuda.driver.JCudaDriver.cuGraphDestroy;
import static jcuda.driver.JCudaDriver.cuGraphExecDestroy;
import static jcuda.driver.JCudaDriver.cuGraphInstantiate;
import static jcuda.driver.JCudaDriver.cuGraphLaunch;
import static jcuda.driver.JCudaDriver.cuStreamBeginCapture;
import static jcuda.driver.JCudaDriver.cuStreamEndCapture;

import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUstreamCaptureMode;

/**
 * A CUDA graph captured from the work one thread queues on one stream, instantiated once and replayed with
 * one launch: for sequences of many small kernels (the mask decoder) whose launch cost on the host would
 * otherwise exceed their GPU time. The captured launches keep their arguments, so a graph is only valid
 * while the buffers it was captured with hold the inputs (fixed pool addresses do).
 */
final class CudaGraph implements AutoCloseable {
    private final CudaContext context;
    private final CUgraph graph;
    private final CUgraphExec exec;
    private boolean closed;

    private CudaGraph(CudaContext context, CUgraph graph, CUgraphExec exec) {
        this.context = context;
        this.graph = graph;
        this.exec = exec;
    }

    /**
     * Captures what {@code work} queues on {@code stream} (from this thread; other threads' streams are not
     * affected: thread-local capture mode) and instantiates it. Nothing runs during capture.
     */
    static CudaGraph capture(CudaStream stream, Runnable work) {
        CudaContext context = stream.context();
        context.bind();
        Cuda.check(cuStreamBeginCapture(stream.stream, CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                "beginning a CUDA graph capture");
        CUgraph graph = new CUgraph();
        try {
            work.run();
        } catch (RuntimeException | Error ex) {
            if (cuStreamEndCapture(stream.stream, graph) == 0) {
                cuGraphDestroy(graph);
            }
            throw ex;
        }
        Cuda.check(cuStreamEndCapture(stream.stream, graph), "ending a CUDA graph capture");
        CUgraphExec exec = new CUgraphExec();
        int r = cuGraphInstantiate(exec, graph, 0);
        if (r != 0) {
            cuGraphDestroy(graph);
            Cuda.check(r, "instantiating a CUDA graph");
        }
        return new CudaGraph(context, graph, exec);
    }

    /** Queues one replay on {@code stream}. */
    void launch(CudaStream stream) {
        if (closed) {
            throw new IllegalStateException("CUDA graph is closed");
        }
        context.bind();
        Cuda.check(cuGraphLaunch(exec, stream.stream), "launching a CUDA graph");
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            context.bind();
            cuGraphExecDestroy(exec);
            cuGraphDestroy(graph);
        }
    }
}
