package io.samstream.stream.track.memory;

import io.samstream.gpu.sam2.ObjectPrompt;
import io.samstream.gpu.sam2.ObjectResult;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Tracking;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A stand-in for SAM 2.1 whose object scores and masks follow a script: per object and per step of its stream (0 for
 * the stream's first frame) a box in the low-resolution mask's cells ({@value #SIDE} a side), or null for "absent"
 * (object score below 0, logits all -1024, as the model gives them). With a limit it counts objects over all its
 * streams as the GPU tracker counts memory banks and, as that one does, batches and refuses a step that would pass
 * the limit before any work. Records which objects were prompted on which step.
 */
public final class ScriptedSam2 implements Sam2Tracking {
    /** The low-resolution mask's side. */
    public static final int SIDE = 16;

    /** Per object and step: its box {@code [x0, y0, x1, y1]} in low-resolution cells, or null when absent. */
    public interface Script {
        int[] box(int id, int step);
    }

    /** Per object and step: its object score while its script says present (5 unless set). */
    public interface Scores {
        float score(int id, int step);
    }

    private Scores scores = (id, step) -> 5f;
    private final Sam2Config config;
    private final Script script;
    private final int limit;
    private int held;
    /** Each prompt seen: {@code {step, id}}. */
    public final List<int[]> prompted = Collections.synchronizedList(new ArrayList<>());

    /** @param limit objects over all streams (0: none) */
    public ScriptedSam2(Sam2Config config, Script script, int limit) {
        this.config = config;
        this.script = script;
        this.limit = limit;
    }

    /** Object scores by script for present objects; this model. */
    public ScriptedSam2 scores(Scores s) {
        this.scores = s;
        return this;
    }

    @Override
    public Sam2Config config() {
        return config;
    }

    @Override
    public String describe() {
        return "scripted SAM 2.1";
    }

    @Override
    public boolean batches() {
        return limit > 0;
    }

    /** Objects held over all streams now. */
    public synchronized int held() {
        return held;
    }

    @Override
    public StreamTracker openStream() {
        return new StreamTracker() {
            final Set<Integer> objects = new LinkedHashSet<>();
            int step;

            @Override
            public List<ObjectResult> track(byte[] rgb, List<ObjectPrompt> prompts) {
                synchronized (ScriptedSam2.this) {
                    int more = 0;
                    for (ObjectPrompt p : prompts) {
                        more += objects.contains(p.objectId()) ? 0 : 1;
                    }
                    if (limit > 0 && held + more > limit) {
                        throw new IllegalStateException("tracking " + held + " objects, " + more
                                + " more would pass the tracker's limit of " + limit);
                    }
                    held += more;
                }
                List<ObjectResult> out = new ArrayList<>();
                Set<Integer> conditioned = new LinkedHashSet<>();
                for (ObjectPrompt p : prompts) {
                    prompted.add(new int[] {step, p.objectId()});
                    objects.add(p.objectId());
                    conditioned.add(p.objectId());
                }
                for (int id : objects) {
                    out.add(result(id, step, conditioned.contains(id)));
                }
                step++;
                return out;
            }

            @Override
            public Set<Integer> objects() {
                return Collections.unmodifiableSet(objects);
            }

            @Override
            public void remove(int objectId) {
                if (objects.remove(objectId)) {
                    synchronized (ScriptedSam2.this) {
                        held--;
                    }
                }
            }

            @Override
            public void close() {
                synchronized (ScriptedSam2.this) {
                    held -= objects.size();
                }
                objects.clear();
            }
        };
    }

    private ObjectResult result(int id, int step, boolean conditioning) {
        int[] b = script.box(id, step);
        float[] logits = new float[SIDE * SIDE];
        java.util.Arrays.fill(logits, b == null ? -1024f : -10f);
        if (b != null) {
            for (int y = b[1]; y < b[3]; y++) {
                for (int x = b[0]; x < b[2]; x++) {
                    logits[y * SIDE + x] = 10f;
                }
            }
        }
        return new ObjectResult(id, logits, SIDE, b == null ? -5f : scores.score(id, step), new float[4], conditioning, 0.9f);
    }

    @Override
    public void close() {
    }
}
