package io.samstream.gpu.cuda;

import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replays a stream's work as CUDA graphs, one per shape: {@link #run} captures the launches of a shape the first time
 * it sees it and replays them with one launch after that (the work must launch on fixed buffers, the same for the
 * same shape). At most {@code max} graphs are kept, the least recently used dropped. A capture that fails is logged
 * once, and the work runs launch by launch from then on. Not thread-safe.
 */
public final class GraphCache implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(GraphCache.class);

    private final String what;
    private final int max;
    private final Map<Object, CudaGraph> graphs = new LinkedHashMap<>(16, 0.75f, true);
    private boolean failed;

    public GraphCache(String what, int max) {
        this.what = what;
        this.max = max;
    }

    /** Queues {@code work} on {@code stream} as the replay of the graph of {@code shape}. */
    public void run(CudaStream stream, Object shape, Runnable work) {
        if (failed) {
            work.run();
            return;
        }
        CudaGraph g = graphs.get(shape);
        if (g == null) {
            try {
                g = CudaGraph.capture(stream, work, what + " " + shape);
            } catch (CudaException e) {
                failed = true;
                log.warn("capturing {} {} into a CUDA graph failed ({}); running it launch by launch", what, shape,
                        e.getMessage());
                work.run();
                return;
            }
            graphs.put(shape, g);
            if (graphs.size() > max) {
                var eldest = graphs.entrySet().iterator().next();
                eldest.getValue().close();
                graphs.remove(eldest.getKey());
            }
        }
        g.launch(stream);
    }

    /** Graphs kept now. */
    public int size() {
        return graphs.size();
    }

    @Override
    public void close() {
        graphs.values().forEach(CudaGraph::close);
        graphs.clear();
    }
}
