package io.samstream.gpu.cuda;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * GPU time per kernel of the launches a {@link CudaKernels} makes while this timer is attached to it
 * ({@link CudaKernels#timeLaunches}): an event pair around each launch, read after the work is done. For benchmarks
 * that say where a part's time goes; never attach it while a CUDA graph is being captured. Call {@link #hold} before
 * the launches: a GPU that runs ahead of the host would otherwise count the host's launch latency (~20 us from Java)
 * into every short kernel's pair.
 */
public final class LaunchTimer implements AutoCloseable {
    private final CudaContext context;
    private final List<CudaEvent> events = new ArrayList<>();
    private final List<String> names = new ArrayList<>();

    public LaunchTimer(CudaContext context) {
        this.context = context;
    }

    /**
     * Keeps {@code stream} busy for {@code millis} ms (a kernel that waits on the GPU's clock), so that the launches
     * queued meanwhile run back to back and each pair times the kernel alone: longer than the host takes to queue them.
     */
    public void hold(CudaKernels kernels, CudaStream stream, int millis) {
        kernels.hold(stream, millis * 1_000_000L);
    }

    void before(String kernel, CudaStream stream) {
        names.add(kernel);
        stream.record(event(2 * names.size() - 2));
    }

    void after(CudaStream stream) {
        stream.record(event(2 * names.size() - 1));
    }

    private CudaEvent event(int i) {
        while (events.size() <= i) {
            events.add(new CudaEvent(context, true));
        }
        return events.get(i);
    }

    /**
     * Waits for the timed launches and returns, per kernel name in order of first launch, {launches, total ms};
     * then starts over.
     */
    public Map<String, double[]> drain() {
        Map<String, double[]> out = new LinkedHashMap<>();
        if (!names.isEmpty()) {
            events.get(2 * names.size() - 1).synchronize();
        }
        for (int i = 0; i < names.size(); i++) {
            double[] t = out.computeIfAbsent(names.get(i), k -> new double[2]);
            t[0]++;
            t[1] += CudaEvent.elapsedMillis(events.get(2 * i), events.get(2 * i + 1));
        }
        names.clear();
        return out;
    }

    @Override
    public void close() {
        for (CudaEvent e : events) {
            e.close();
        }
        events.clear();
    }
}
