package io.samstream.gpu.sam3.video;

import io.samstream.gpu.cpu.CpuThreadPool;
import java.util.stream.IntStream;

/**
 * The mask inputs of the tracker's memory encoder ({@code _encode_new_memory}: x 20 - 10 after the sigmoid or, for
 * masks given as prompts, after binarizing), at the square the encoder reads (16 x grid, 1152):
 * <ul>
 *   <li>a tracked frame ({@code _tracker_update_memories}): low-resolution logits upsampled bilinearly to that
 *       square, sigmoid, x 20 - 10;</li>
 *   <li>a new object ({@code propagate_in_video_preflight}): logits at the ViT's input (1008) binarized to +-10,
 *       then resized to that square antialiased ({@code SimpleMaskDownSampler.interpol_size}).</li>
 * </ul>
 */
final class MemoryMasks {
    /** Output rows of the encoder's square a parallel task takes. */
    static final int ROWS_PER_TASK = 16;
    /**
     * Beyond +-18 the float sigmoid x 20 - 10 is exactly +-10 (checked for every float), so those pixels skip
     * {@code Math.exp}.
     */
    private static final float SATURATED = 18f;

    private MemoryMasks() {}

    /** A concept's tracked masks as the memory encoder reads them: per object, the input and whether it is present. */
    record Tracked(float[][] scaled, boolean[] present) {}

    /**
     * {@code _tracker_update_memories} for a concept's objects on a tracked frame: each low-resolution mask [low²]
     * upsampled bilinearly to [side²], the pixel-wise shrinkage rule across all of them
     * ({@link MaskOverlaps#suppressShrunk}), then sigmoid x 20 - 10; the same values as those steps one after the
     * other, computed in row bands on the pool. Only the objects in {@code wanted} get an input (the others, null,
     * still count in the rule); present: the object's area after the rule is not 0.
     */
    static Tracked fromTracked(CpuThreadPool pool, float[][] lowRes, int low, int side, boolean[] wanted) {
        int n = lowRes.length;
        float[][] high = new float[n][side * side];
        int[] areas = upsampleAndCount(pool, lowRes, low, side, high);
        boolean[] shrunk = MaskOverlaps.shrunk(areas, n);
        scale(pool, high, side, shrunk, wanted);
        boolean[] present = new boolean[n];
        for (int k = 0; k < n; k++) {
            present[k] = !shrunk[k] && areas[2 * k] > 0;
            if (!wanted[k]) {
                high[k] = null;
            }
        }
        return new Tracked(high, present);
    }

    /**
     * Upsamples every mask into high, a band of rows per task, and counts each band's areas before and after the
     * pixel-wise rule while it is still in cache; returns the sums ({@link MaskOverlaps#countShrinkage}).
     */
    private static int[] upsampleAndCount(CpuThreadPool pool, float[][] lowRes, int low, int side, float[][] high) {
        int n = lowRes.length;
        int bands = (side + ROWS_PER_TASK - 1) / ROWS_PER_TASK;
        MaskResize.Bilinear up = new MaskResize.Bilinear(low, low, side, side);
        int[][] counts = new int[bands][2 * n];
        pool.forEach(bands, b -> {
            int from = b * ROWS_PER_TASK;
            int to = Math.min(side, from + ROWS_PER_TASK);
            for (int k = 0; k < n; k++) {
                up.rows(lowRes[k], from, to, high[k], from * side);
            }
            MaskOverlaps.countShrinkage(high, from * side, to * side, counts[b]);
        });
        int[] areas = new int[2 * n];
        for (int[] c : counts) {
            for (int j = 0; j < areas.length; j++) {
                areas[j] += c[j];
            }
        }
        return areas;
    }

    /** The wanted masks to sigmoid x 20 - 10 in place, a band of rows of one mask per task. */
    private static void scale(CpuThreadPool pool, float[][] high, int side, boolean[] shrunk, boolean[] wanted) {
        int bands = (side + ROWS_PER_TASK - 1) / ROWS_PER_TASK;
        int[] objects = IntStream.range(0, high.length).filter(k -> wanted[k]).toArray();
        pool.forEach(objects.length * bands, task -> {
            int k = objects[task / bands];
            int from = (task % bands) * ROWS_PER_TASK * side;
            int to = Math.min(side * side, from + ROWS_PER_TASK * side);
            scaleInPlace(high[k], from, to, shrunk[k]);
        });
    }

    /** Pixels [from, to) of logits to sigmoid x 20 - 10, first clamped to at most -10 when suppressed. */
    private static void scaleInPlace(float[] x, int from, int to, boolean suppressed) {
        for (int i = from; i < to; i++) {
            float v = suppressed ? Math.min(x[i], MaskOverlaps.SUPPRESSED) : x[i];
            x[i] = scaled(v);
        }
    }

    /** sigmoid(v) x 20 - 10. */
    static float scaled(float v) {
        if (v >= SATURATED) {
            return 10f;
        }
        if (v <= -SATURATED) {
            return -10f;
        }
        return Propagation.sigmoid(v) * 20f - 10f;
    }

    /** A prompted frame's logits [input²]: > 0 as +10, else -10, resized antialiased to [maskSize²]. */
    static float[] fromPrompt(float[] logits, int input, int maskSize) {
        float[] bin = new float[logits.length];
        for (int i = 0; i < bin.length; i++) {
            bin[i] = logits[i] > 0 ? 10f : -10f;
        }
        return input == maskSize ? bin : MaskResize.antialiased(bin, input, input, maskSize, maskSize);
    }
}
