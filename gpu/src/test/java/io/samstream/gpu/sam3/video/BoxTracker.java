package io.samstream.gpu.sam3.video;

import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.Sam3Weights;
import java.util.Comparator;
import java.util.List;

/**
 * Scripted tracker passes with known masks: an object's memory features carry the box of the mask they were made
 * from (low-resolution pixels); each propagation moves the box of the most recent spatial memory (the lowest
 * temporal slot) by a velocity and gives that box as the mask. An object whose box leaves the frame is absent from
 * then on. Pointers carry the box too; memory features have the real size, and are counted ({@link #memories}).
 */
final class BoxTracker implements TrackerPasses {
    final Sam3TrackerConfig config = Sam3Weights.TINY_TRACKER;
    int vx;
    int vy;
    int propagations;
    /** Every memory it made, counted (the ones its objects' memories hold: {@link CountedMemories#live}). */
    final CountedMemories memories = new CountedMemories();

    BoxTracker(int vx, int vy) {
        this.vx = vx;
        this.vy = vy;
    }

    @Override
    public Sam3TrackerConfig config() {
        return config;
    }

    /** No features: the script reads only its memories' boxes. */
    @Override
    public TrackerFrame features(CpuThreadPool pool, FeatureMap[] levels) {
        return () -> {
            throw new UnsupportedOperationException("scripted passes read no features");
        };
    }

    @Override
    public Propagation propagate(CpuThreadPool pool, TrackerFrame f, List<Sam3TrackerModel.Spatial> spatial,
            List<Sam3TrackerModel.Pointer> pointers, int pointerWindow) {
        propagations++;
        float[] last = spatial.stream().min(Comparator.comparingInt(Sam3TrackerModel.Spatial::slot))
                .orElseThrow().features().values();
        int n = config.lowResSize();
        float[] lowRes = new float[n * n];
        if (last[4] == 0f) {
            java.util.Arrays.fill(lowRes, Sam3TrackerModel.NO_OBJECT_SCORE);
            return new Propagation(lowRes, -5f, new float[config.hidden()], 0.9f);
        }
        int x0 = (int) last[0] + vx;
        int y0 = (int) last[1] + vy;
        int x1 = (int) last[2] + vx;
        int y1 = (int) last[3] + vy;
        if (x1 <= 0 || y1 <= 0 || x0 >= n || y0 >= n) {
            java.util.Arrays.fill(lowRes, Sam3TrackerModel.NO_OBJECT_SCORE);
            return new Propagation(lowRes, -5f, new float[config.hidden()], 0.9f);
        }
        float[] logits = Masks.logits(n, x0, y0, x1, y1, 8f);
        return new Propagation(logits, 5f, pointer(x0, y0, x1, y1), 0.9f);
    }

    @Override
    public float[] pointerFromMask(CpuThreadPool pool, TrackerFrame f, boolean[] mask) {
        int m = config.maskSize();
        int x0 = m;
        int y0 = m;
        int x1 = -1;
        int y1 = -1;
        for (int i = 0; i < mask.length; i++) {
            if (mask[i]) {
                x0 = Math.min(x0, i % m);
                y0 = Math.min(y0, i / m);
                x1 = Math.max(x1, i % m);
                y1 = Math.max(y1, i / m);
            }
        }
        if (x1 < 0) {
            return new float[config.hidden()];
        }
        int s = m / config.lowResSize();
        return pointer(Math.round((float) x0 / s), Math.round((float) y0 / s), Math.round((x1 + 1f) / s),
                Math.round((y1 + 1f) / s));
    }

    @Override
    public FeatureMap encodeMemory(CpuThreadPool pool, TrackerFrame f, float[] scaledMask, boolean present) {
        boolean[] on = new boolean[scaledMask.length];
        for (int i = 0; i < on.length; i++) {
            on[i] = scaledMask[i] > 0;
        }
        float[] box = pointerFromMask(pool, f, on);
        float[] features = new float[config.grid() * config.grid() * config.memDim()];
        System.arraycopy(box, 0, features, 0, 5);
        return memories.of(features);
    }

    private float[] pointer(int x0, int y0, int x1, int y1) {
        float[] p = new float[config.hidden()];
        p[0] = x0;
        p[1] = y0;
        p[2] = x1;
        p[3] = y1;
        p[4] = 1f;
        return p;
    }
}
