package io.samstream.bench;

import io.samstream.gpu.sam2.ObjectPrompt;
import io.samstream.gpu.sam2.ObjectResult;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam2.Sam2Tracking;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A stand-in for SAM 2.1 in {@link MemoryModeBench} ({@code --stand-in MS}): each call sleeps {@code ms} milliseconds a
 * frame, as a GPU call would keep the model's thread waiting without using the CPU, and gives each object a disc of
 * logits at the release's low resolution (256², object score +5). So a row measures the engine's host work alone
 * (resizes, masks, bookkeeping, records) against a model of a chosen speed, on any machine; it says nothing of SAM.
 * The config is hiera_tiny's (input 1024). Batches, as the GPU tracker does.
 */
final class StandInSam2 implements Sam2Tracking {
    private final Sam2Config config = Sam2Shapes.release("hiera_tiny");
    private final double msPerFrame;

    StandInSam2(double msPerFrame) {
        if (!(msPerFrame >= 0 && msPerFrame <= 10_000)) {
            throw new IllegalArgumentException("--stand-in takes 0 to 10000 ms a frame, got " + msPerFrame);
        }
        this.msPerFrame = msPerFrame;
    }

    @Override
    public Sam2Config config() {
        return config;
    }

    @Override
    public String describe() {
        return "a stand-in model (" + msPerFrame + " ms a frame, disc masks)";
    }

    @Override
    public boolean batches() {
        return true;
    }

    @Override
    public List<List<ObjectResult>> track(List<StreamTracker> streams, List<byte[]> frames,
                                          List<List<ObjectPrompt>> prompts) {
        try {
            Thread.sleep(Math.round(msPerFrame * streams.size()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        List<List<ObjectResult>> out = new ArrayList<>(streams.size());
        for (int i = 0; i < streams.size(); i++) {
            out.add(((Stream) streams.get(i)).step(prompts.get(i)));
        }
        return out;
    }

    @Override
    public StreamTracker openStream() {
        return new Stream();
    }

    @Override
    public void close() {}

    /** One stream's objects; its k-th object's disc sits in cell k of a 4 x 4 grid. */
    private final class Stream implements StreamTracker {
        private final Set<Integer> ids = new LinkedHashSet<>();

        @Override
        public List<ObjectResult> track(byte[] rgb, List<ObjectPrompt> prompts) {
            return StandInSam2.this.track(List.of(this), List.of(rgb), List.of(prompts)).get(0);
        }

        List<ObjectResult> step(List<ObjectPrompt> prompts) {
            Set<Integer> prompted = new LinkedHashSet<>();
            for (ObjectPrompt p : prompts) {
                ids.add(p.objectId());
                prompted.add(p.objectId());
            }
            List<ObjectResult> out = new ArrayList<>(ids.size());
            int side = config.lowResSize();
            int k = 0;
            for (int id : ids) {
                float[] logits = new float[side * side];
                float cx = side * (0.125f + 0.25f * (k % 4)), cy = side * (0.125f + 0.25f * (k / 4 % 4));
                for (int y = 0; y < side; y++) {
                    for (int x = 0; x < side; x++) {
                        logits[y * side + x] = side / 8f - (float) Math.hypot(x - cx, y - cy);
                    }
                }
                out.add(new ObjectResult(id, logits, side, 5f, new float[config.hidden()], prompted.contains(id),
                        0.9f));
                k++;
            }
            return out;
        }

        @Override
        public Set<Integer> objects() {
            return Collections.unmodifiableSet(ids);
        }

        @Override
        public void remove(int objectId) {
            ids.remove(objectId);
        }

        @Override
        public void close() {
            ids.clear();
        }
    }
}
