package io.samstream.gpu.cuda;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * GPU time per step of profiled passes: a timing event recorded on the stream at each {@link #mark} (events made at
 * first use and reused by later passes), the time between consecutive marks added to the mark's step once the pass
 * has finished ({@link #collect}). For benchmarks; the events cost a little time of their own. Not thread-safe.
 */
public final class StepProfiler implements StepMarks, AutoCloseable {
    private final CudaContext context;
    private final CudaStream stream;
    private final List<String> labels = new ArrayList<>();
    private final List<CudaEvent> events = new ArrayList<>();
    private final Map<String, Double> totals = new LinkedHashMap<>();

    /** Profiles the passes queued on {@code stream}. */
    public StepProfiler(CudaContext context, CudaStream stream) {
        this.context = context;
        this.stream = stream;
    }

    /** Starts a pass: forgets the last pass's marks and marks its start. */
    public void begin() {
        labels.clear();
        mark("start");
    }

    @Override
    public void mark(String label) {
        int i = labels.size();
        if (events.size() <= i) {
            events.add(new CudaEvent(context, true));
        }
        labels.add(label);
        stream.record(events.get(i));
    }

    /** After the stream has synchronized: adds this pass's step times (each step named by the mark that ends it). */
    public void collect() {
        for (int i = 1; i < labels.size(); i++) {
            totals.merge(labels.get(i), (double) CudaEvent.elapsedMillis(events.get(i - 1), events.get(i)),
                    Double::sum);
        }
    }

    /** Milliseconds per step, summed over steps of one name and divided by {@code passes}, in order of first mark. */
    public Map<String, Double> averages(int passes) {
        Map<String, Double> out = new LinkedHashMap<>(totals);
        out.replaceAll((k, v) -> v / passes);
        return out;
    }

    /** Frees the events. */
    @Override
    public void close() {
        events.forEach(CudaEvent::close);
        events.clear();
    }
}
