package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cuda.Bf16;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.sam2.FrameFeatures;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam3.Sam3Shapes;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.Sam3Weights;
import io.samstream.gpu.sam3.video.Propagation;
import io.samstream.gpu.sam3.video.Sam3TrackerModel;
import io.samstream.gpu.sam3.video.TrackerPasses;
import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * SAM 3's tracker passes on the GPU ({@link CudaSam3Tracker}, bf16) against the fp32 CPU reference ({@link
 * Sam3TrackerModel}) on the same inputs (features and memories rounded to bf16, as the GPU reads them): the tiny video
 * model the tests build ({@link Sam3Weights#videoStateDict}: width 32, memory 8, grid 8), with the object present and,
 * on a second model, absent; and random weights at the release's tracker shapes (grid 72: 5184 tokens a memory, width
 * 256, memory 64, 4 attention layers), present.
 *
 * <p>Each run: a memory of a conditioning frame, three tracked frames and four pointers on frame A (its graph
 * captured), then one memory and one pointer on A and again on frame B (that graph replayed: it must read B's
 * features and memory, not those of the capture); the memory encoder on A's features (present) and B's (absent,
 * the no-object embedding). The object score head's bias is moved by +-10 (present / absent beyond doubt) and the IoU
 * head's makes mask 2 the clear best of 1..3 (no near tie the bf16 image side could tip; a pointer from another
 * mask's token shows in its cosine). Checked: low-res logits (cosine, relative L2), object score (sign and value),
 * predicted IoU, pointer cosine; an absent object's mask all -1024 and its pointer no_obj_ptr; memory features
 * (cosine, relative L2). Skips with the reason where no GPU is usable.
 */
class CudaSam3TrackerGpuTest extends GpuTestBase {
    private static final double MIN_COSINE = 0.998, MAX_REL_L2 = 0.06, POINTER_COSINE = 0.99, IOU_TOL = 0.02;
    private static final double MEMORY_COSINE = 0.999, MEMORY_REL_L2 = 0.03;
    private static final int THREADS = Runtime.getRuntime().availableProcessors();
    private static final String SCORE_BIAS = "tracker.sam_mask_decoder.pred_obj_score_head.layers.2.bias";
    private static final String IOU_BIAS = "tracker.sam_mask_decoder.iou_prediction_head.layers.2.bias";

    @Test
    void tinyVideoModelMatchesTheCpuReference() {
        StateDict weights = Sam3Weights.videoStateDict(Sam3Weights.TINY, Sam3Weights.TINY_TRACKER);
        compare("tiny, present", arranged(weights, true), Sam3Weights.TINY_TRACKER, 81);
        compare("tiny, absent", arranged(weights, false), Sam3Weights.TINY_TRACKER, 82);
    }

    @Test
    void releaseShapesMatchTheCpuReference() {
        Sam3TrackerConfig config = CudaSam3TrackerTest.RELEASE_TRACKER;
        // random weights at Sam2Shapes.random's scales: Linears N(0, 1/fan-in), LayerNorm weights near 1
        StateDict weights = Sam2Shapes.random(Sam3Shapes.trackerShapes(CudaSam3Test.RELEASE, config), 83);
        compare("release shapes, present", arranged(weights, true), config, 84);
    }

    @Test
    void theFactoryOpensOnTheGpuAndAClosedTrackerRefusesWork() {
        StateDict sd = Sam3Weights.videoStateDict(Sam3Weights.TINY, Sam3Weights.TINY_TRACKER);
        Sam3TrackerConfig config = Sam3Weights.TINY_TRACKER;
        Sam3TrackerModel cpu = new Sam3TrackerModel(sd, config);
        TrackerPasses passes = CudaSam3Tracker.factory(0).open(sd, config, cpu);
        try (CpuThreadPool pool = new CpuThreadPool(2)) {
            assertTrue(passes.describe().startsWith("memory attention, mask decoder and memory encoder on "),
                    passes.describe());
            assertEquals(config, passes.config());
            FrameFeatures f = features(cpu, pool, config, new Random(85));
            passes.close();
            float[] mask = new float[config.maskSize() * config.maskSize()];
            assertThrows(IllegalStateException.class, () -> passes.encodeMemory(pool, f, mask, true));
            passes.close();   // twice: nothing
        }
    }

    /** The passes on both sides, as the class comment says; {@code sd} arranged by {@link #arranged}. */
    private static void compare(String what, StateDict sd, Sam3TrackerConfig config, long seed) {
        Sam3TrackerModel cpu = new Sam3TrackerModel(sd, config);
        boolean present = sd.get(SCORE_BIAS).data()[0] > 0;
        try (CpuThreadPool pool = new CpuThreadPool(THREADS);
             CudaSam3Tracker onGpu = CudaSam3Tracker.open(sd, config, cpu, 0)) {
            Random rnd = new Random(seed);
            FrameFeatures a = features(cpu, pool, config, rnd), b = features(cpu, pool, config, rnd);
            int window = Sam3TrackerConfig.MAX_OBJECT_POINTERS;
            int[] slots = {config.numMaskmem() - 1, 2, 1, 0};
            int[] distances = {7, 3, 2, 1};
            List<Sam3TrackerModel.Spatial> spatial = new ArrayList<>();
            List<Sam3TrackerModel.Pointer> pointers = new ArrayList<>();
            for (int i = 0; i < slots.length; i++) {
                spatial.add(new Sam3TrackerModel.Spatial(memoryFeatures(config, rnd), slots[i]));
                pointers.add(new Sam3TrackerModel.Pointer(GpuTestSupport.randomBf16(rnd, config.hidden(), 1),
                        distances[i]));
            }
            check(what + ", frame A, 4 memories + 4 pointers", sd, present,
                    cpu.propagate(pool, a, spatial, pointers, window),
                    onGpu.propagate(pool, a, spatial, pointers, window));
            List<Sam3TrackerModel.Spatial> one = List.of(spatial.get(0));
            List<Sam3TrackerModel.Pointer> onePointer = List.of(pointers.get(0));
            check(what + ", frame A, 1 memory + 1 pointer", sd, present,
                    cpu.propagate(pool, a, one, onePointer, window), onGpu.propagate(pool, a, one, onePointer, window));
            one = List.of(new Sam3TrackerModel.Spatial(memoryFeatures(config, rnd), config.numMaskmem() - 1));
            onePointer = List.of(new Sam3TrackerModel.Pointer(GpuTestSupport.randomBf16(rnd, config.hidden(), 1), 4));
            check(what + ", frame B, 1 memory + 1 pointer (replayed)", sd, present,
                    cpu.propagate(pool, b, one, onePointer, window), onGpu.propagate(pool, b, one, onePointer, window));

            float[] maskA = scaledDisc(config.maskSize(), 0.4, 0.5, 0.25), maskB = scaledDisc(config.maskSize(), 0.6,
                    0.4, 0.2);
            GpuTestSupport.assertCosineAndRelL2(what + ", memory of frame A (present)",
                    cpu.encodeMemory(pool, a, maskA, true).values(), onGpu.encodeMemory(pool, a, maskA, true).values(),
                    MEMORY_COSINE,
                    MEMORY_REL_L2);
            GpuTestSupport.assertCosineAndRelL2(what + ", memory of frame B (absent, replayed)",
                    cpu.encodeMemory(pool, b, maskB, false).values(), onGpu.encodeMemory(pool, b, maskB, false).values(),
                    MEMORY_COSINE,
                    MEMORY_REL_L2);
        }
    }

    private static void check(String what, StateDict sd, boolean present, Propagation want, Propagation got) {
        float ws = want.objectScore(), gs = got.objectScore();
        System.out.printf(java.util.Locale.ROOT, "%s: object score %.4f / %.4f, predicted IoU %.4f / %.4f%n", what,
                gs, ws, got.iou(), want.iou());
        assertEquals(present, ws > 0, what + ": the arranged score bias decides the reference");
        assertEquals(ws > 0, gs > 0, what + ": object score " + gs + ", reference " + ws);
        assertTrue(Math.abs(gs - ws) <= 0.1 + 0.02 * Math.abs(ws), what + ": object score " + gs + ", reference " + ws);
        assertTrue(Math.abs(got.iou() - want.iou()) <= IOU_TOL, what + ": IoU " + got.iou() + ", reference "
                + want.iou());
        if (present) {
            GpuTestSupport.assertCosineAndRelL2(what + ": low-res logits", want.lowRes(), got.lowRes(), MIN_COSINE,
                    MAX_REL_L2);
            GpuTestSupport.assertCosineAndRelL2(what + ": pointer", want.pointer(), got.pointer(), POINTER_COSINE,
                    1.0);
        } else {
            for (float v : got.lowRes()) {
                assertEquals(Sam3TrackerModel.NO_OBJECT_SCORE, v, what + ": an absent object's mask is all -1024");
            }
            float[] noObjPtr = sd.get("tracker.no_obj_ptr").data();
            float[] expect = new float[noObjPtr.length];
            for (int k = 0; k < expect.length; k++) {
                expect[k] = Bf16.round(noObjPtr[k]);
            }
            assertArrayEquals(expect, got.pointer(), what + ": an absent object's pointer is no_obj_ptr (bf16)");
        }
    }

    /**
     * {@code sd} with the object score head's bias at +10 (present) or -10 (absent), and the IoU head's at (0, -6, 6,
     * -6): mask 2 the clear best of the multimask outputs 1..3.
     */
    static StateDict arranged(StateDict sd, boolean present) {
        Map<String, Tensor> map = new LinkedHashMap<>();
        for (String k : sd.keys()) {
            map.put(k, sd.get(k));
        }
        map.put(SCORE_BIAS, new Tensor(new float[] {present ? 10f : -10f}, 1));
        map.put(IOU_BIAS, new Tensor(new float[] {0f, -6f, 6f, -6f}, 4));
        return new StateDict(Path.of("arranged-sam3-video.pt"), map);
    }

    /** A frame's tracker features from random neck levels, every map rounded to bf16 as the GPU reads it. */
    static FrameFeatures features(Sam3TrackerModel cpu, CpuThreadPool pool, Sam3TrackerConfig c, Random rnd) {
        int g = c.grid(), d = c.hidden();
        float[][] levels = {GpuTestSupport.randomBf16(rnd, 16 * g * g * d, 1),
            GpuTestSupport.randomBf16(rnd, 4 * g * g * d, 1), GpuTestSupport.randomBf16(rnd, g * g * d, 1)};
        FrameFeatures f = cpu.features(pool, levels);
        return new FrameFeatures(f.top(), f.topPos(), bf16(f.s0()), bf16(f.s1()), f.side());
    }

    /** A memory's features [grid², memDim], bf16 as the predictor stores them. */
    private static float[] memoryFeatures(Sam3TrackerConfig c, Random rnd) {
        return GpuTestSupport.randomBf16(rnd, c.grid() * c.grid() * c.memDim(), 1);
    }

    /** A soft disc at (cx, cy) of radius r (fractions of the side), as the memory encoder reads it: x20 - 10. */
    private static float[] scaledDisc(int side, double cx, double cy, double r) {
        float[] m = new float[side * side];
        for (int y = 0; y < side; y++) {
            for (int x = 0; x < side; x++) {
                double logit = (r * side - Math.hypot(x - cx * side, y - cy * side)) * 32.0 / side;
                m[y * side + x] = (float) (20.0 / (1.0 + Math.exp(-logit)) - 10.0);
            }
        }
        return m;
    }

    private static float[] bf16(float[] v) {
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = Bf16.round(v[i]);
        }
        return out;
    }
}
