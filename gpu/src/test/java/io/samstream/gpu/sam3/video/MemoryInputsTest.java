package io.samstream.gpu.sam3.video;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.sam2.MemoryReadout;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.Sam3Weights;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The memory attention's inputs that the CPU and the GPU tracker passes share ({@link Sam3TrackerModel#memoryInputs}):
 * the spatial memories in order, each with its slot's position, then each pointer split into hidden / memDim tokens
 * with the encoding of its distance, on the tiny tracker (grid 8, width 32, memory 8: 4 tokens a pointer).
 */
class MemoryInputsTest {
    private static final Sam3TrackerConfig C = Sam3Weights.TINY_TRACKER;

    @Test
    void spatialMemoriesThenPointerTokensEachWithItsPosition() {
        StateDict sd = Sam3Weights.videoStateDict(Sam3Weights.TINY, C);
        Sam3TrackerModel model = new Sam3TrackerModel(sd, C);
        MemoryReadout readout = new MemoryReadout(Sam3Checkpoint.tracker(sd), C.sam2Parts());
        int n = C.grid() * C.grid(), m = C.memDim(), split = C.hidden() / m, window = 16;
        Random rnd = new Random(7);
        float[] cond = random(rnd, n * m), recent = random(rnd, n * m);
        float[] p0 = random(rnd, C.hidden()), p1 = random(rnd, C.hidden());
        List<Sam3TrackerModel.Spatial> spatial = List.of(new Sam3TrackerModel.Spatial(cond, C.numMaskmem() - 1),
                new Sam3TrackerModel.Spatial(recent, 0));
        List<Sam3TrackerModel.Pointer> pointers = List.of(new Sam3TrackerModel.Pointer(p0, 5),
                new Sam3TrackerModel.Pointer(p1, 1));
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            Sam3TrackerModel.MemoryInputs in = model.memoryInputs(pool, spatial, pointers, window);
            assertEquals(2 * n + 2 * split, in.tokens());
            assertEquals(2 * split, in.pointerTokens());
            assertEquals(in.tokens() * m, in.memory().length);
            assertEquals(in.tokens() * m, in.pos().length);
            assertArrayEquals(cond, rows(in.memory(), 0, n, m));
            assertArrayEquals(recent, rows(in.memory(), n, n, m));
            assertArrayEquals(readout.spatialPosition(C.numMaskmem() - 1), rows(in.pos(), 0, n, m));
            assertArrayEquals(readout.spatialPosition(0), rows(in.pos(), n, n, m));
            float[][] ptrs = {p0, p1};
            int[] distances = {5, 1};
            for (int i = 0; i < 2; i++) {
                float[] enc = readout.pointerPosition(pool, distances[i], window);
                for (int s = 0; s < split; s++) {
                    int row = 2 * n + i * split + s;
                    assertArrayEquals(Arrays.copyOfRange(ptrs[i], s * m, (s + 1) * m), rows(in.memory(), row, 1, m),
                            "pointer " + i + " token " + s);
                    assertArrayEquals(enc, rows(in.pos(), row, 1, m), "pointer " + i + " token " + s + " position");
                }
            }
            assertThrows(IllegalStateException.class, () -> model.memoryInputs(pool, List.of(), List.of(), window));
        }
    }

    private static float[] rows(float[] a, int from, int count, int width) {
        return Arrays.copyOfRange(a, from * width, (from + count) * width);
    }

    private static float[] random(Random rnd, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) rnd.nextGaussian();
        }
        return v;
    }
}
