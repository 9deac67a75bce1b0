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
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Model;
import io.samstream.gpu.sam3.Sam3Shapes;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.Sam3Weights;
import io.samstream.gpu.sam3.VisionFeatures;
import io.samstream.gpu.sam3.video.Propagation;
import io.samstream.gpu.sam3.video.Sam3TrackerModel;
import io.samstream.gpu.sam3.video.TrackerFrame;
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
 * (cosine, relative L2).
 *
 * <p>The device memory bank over several frames and objects ({@link #overFrames}): each object's memories stay in
 * the bank from the frame that encodes them to the last frame that reads them; a tracker whose bank is smaller than
 * what the objects hold (memories spilled to the host, mixed with banked ones) and one without a bank must give
 * exactly the same results (the memories are bf16 either way, the same values in the same places), the CPU reference
 * reading the same memories the tolerances above, and the bank's slots come back as memories are released. Skips
 * with the reason where no GPU is usable.
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
    void tinyDeviceBankOverFramesAndObjects() {
        StateDict weights = Sam3Weights.videoStateDict(Sam3Weights.TINY, Sam3Weights.TINY_TRACKER);
        overFrames("tiny bank", arranged(weights, true), Sam3Weights.TINY_TRACKER, 3, 9, 86);
    }

    @Test
    void releaseShapesDeviceBankOverFramesAndObjects() {
        Sam3TrackerConfig config = CudaSam3TrackerTest.RELEASE_TRACKER;
        StateDict weights = Sam2Shapes.random(Sam3Shapes.trackerShapes(CudaSam3Test.RELEASE, config), 87);
        overFrames("release bank", arranged(weights, true), config, 2, 4, 88);
    }

    /**
     * A frame's memories from its objects' low-resolution masks on the device ({@link
     * CudaSam3Tracker#encodeTrackedMemories}: upsampling, the pixel-wise shrinkage rule, scaling and the encoder
     * there) against the CPU's rule and encoder on the same masks: a large disc; a smaller, lower one inside it (it
     * keeps none of its area under the rule: suppressed whole, absent); one not wanted (null on both sides, but in
     * the rule); an empty mask (absent); a disc alone. At the release shapes and the tiny model's.
     */
    @Test
    void trackedMemoriesFromLowResolutionMasksMatchTheCpuRule() {
        Sam3TrackerConfig release = CudaSam3TrackerTest.RELEASE_TRACKER;
        trackedMemories("release shapes", arranged(Sam2Shapes.random(Sam3Shapes.trackerShapes(CudaSam3Test.RELEASE,
                release), 89), true), release, 90);
        trackedMemories("tiny", arranged(Sam3Weights.videoStateDict(Sam3Weights.TINY, Sam3Weights.TINY_TRACKER), true),
                Sam3Weights.TINY_TRACKER, 91);
    }

    /**
     * A new object's pointer from its mask ({@link CudaSam3Tracker#pointerFromMask}: the dense prompt made on the host,
     * the decoder on the device) against the CPU reference's, on frame A (the graph captured) and frame B (replayed:
     * B's features, B's mask): present, the pointer's cosine; absent, exactly {@code no_obj_ptr}; an empty mask,
     * {@code no_obj_ptr} on both sides. The tiny model present and absent, the release shapes present.
     */
    @Test
    void pointersFromMasksMatchTheCpuReference() {
        StateDict tiny = Sam3Weights.videoStateDict(Sam3Weights.TINY, Sam3Weights.TINY_TRACKER);
        pointersFromMasks("tiny, present", arranged(tiny, true), Sam3Weights.TINY_TRACKER, 92);
        pointersFromMasks("tiny, absent", arranged(tiny, false), Sam3Weights.TINY_TRACKER, 93);
        Sam3TrackerConfig release = CudaSam3TrackerTest.RELEASE_TRACKER;
        pointersFromMasks("release shapes, present", arranged(Sam2Shapes.random(Sam3Shapes.trackerShapes(
                CudaSam3Test.RELEASE, release), 94), true), release, 95);
    }

    private static void pointersFromMasks(String what, StateDict sd, Sam3TrackerConfig config, long seed) {
        Sam3TrackerModel cpu = new Sam3TrackerModel(sd, config);
        boolean present = sd.get(SCORE_BIAS).data()[0] > 0;
        float[] noObjPtr = sd.get("tracker.no_obj_ptr").data();
        int side = config.maskSize();
        try (CpuThreadPool pool = new CpuThreadPool(THREADS);
             CudaSam3Tracker onGpu = CudaSam3Tracker.open(sd, config, cpu, 0)) {
            Random rnd = new Random(seed);
            TrackerFrame a = features(cpu, pool, config, rnd), b = features(cpu, pool, config, rnd);
            boolean[][] masks = {binary(scaledDisc(side, 0.4, 0.5, 0.25)), binary(scaledDisc(side, 0.6, 0.4, 0.15))};
            TrackerFrame[] frames = {a, b};
            for (int i = 0; i < 2; i++) {
                String at = what + ", frame " + (i == 0 ? "A" : "B (replayed)");
                float[] want = cpu.pointerFromMask(pool, frames[i], masks[i]);
                float[] got = onGpu.pointerFromMask(pool, frames[i], masks[i]);
                if (present) {
                    GpuTestSupport.assertCosineAndRelL2(at + ": pointer", want, got, POINTER_COSINE, 1.0);
                } else {
                    assertArrayEquals(noObjPtr, want, at + ": the arranged score bias decides the reference");
                    assertArrayEquals(noObjPtr, got, at + ": an absent object's pointer is no_obj_ptr");
                }
            }
            boolean[] empty = new boolean[side * side];
            assertArrayEquals(noObjPtr, cpu.pointerFromMask(pool, a, empty), what + ": an empty mask, CPU");
            assertArrayEquals(noObjPtr, onGpu.pointerFromMask(pool, a, empty), what + ": an empty mask, GPU");
            assertThrows(IllegalArgumentException.class, () -> onGpu.pointerFromMask(pool, a, new boolean[side]));
        }
    }

    private static boolean[] binary(float[] scaled) {
        boolean[] m = new boolean[scaled.length];
        for (int i = 0; i < m.length; i++) {
            m[i] = scaled[i] > 0;
        }
        return m;
    }

    private static void trackedMemories(String what, StateDict sd, Sam3TrackerConfig config, long seed) {
        Sam3TrackerModel cpu = new Sam3TrackerModel(sd, config);
        int l = config.lowResSize();
        try (CpuThreadPool pool = new CpuThreadPool(THREADS);
             CudaSam3Tracker onGpu = CudaSam3Tracker.open(sd, config, cpu, 0)) {
            TrackerFrame f = features(cpu, pool, config, new Random(seed));
            float[] empty = new float[l * l];
            java.util.Arrays.fill(empty, -6f);
            float[][] low = {lowDisc(l, 0.35, 0.40, 0.25, 8f), lowDisc(l, 0.40, 0.42, 0.12, 4f),
                lowDisc(l, 0.75, 0.75, 0.15, 8f), empty, lowDisc(l, 0.80, 0.20, 0.10, 8f)};
            boolean[] wanted = {true, true, false, true, true};
            List<FeatureMap> want = cpu.encodeTrackedMemories(pool, f, low, wanted);
            List<FeatureMap> got = onGpu.encodeTrackedMemories(pool, f, low, wanted);
            assertEquals(low.length, got.size());
            for (int k = 0; k < low.length; k++) {
                if (!wanted[k]) {
                    assertEquals(null, want.get(k));
                    assertEquals(null, got.get(k), what + ": object " + k + " was not wanted");
                    continue;
                }
                GpuTestSupport.assertCosineAndRelL2(what + ", tracked memory of object " + k, want.get(k).values(),
                        got.get(k).values(), MEMORY_COSINE, MEMORY_REL_L2);
            }
            // the case means something: alone, the inner disc's memory is another (present, not suppressed)
            float[] alone = cpu.encodeTrackedMemories(pool, f, new float[][] {low[1]}, new boolean[] {true}).get(0)
                    .values();
            assertTrue(cosine(alone, want.get(1).values()) < 0.999, what + ": the rule suppressed the inner disc");
        }
    }

    /** Low-resolution logits of a disc at (cx, cy) of radius r (fractions of the side): amp at its centre, 0 at its edge. */
    private static float[] lowDisc(int l, double cx, double cy, double r, float amp) {
        float[] m = new float[l * l];
        for (int y = 0; y < l; y++) {
            for (int x = 0; x < l; x++) {
                m[y * l + x] = (float) (amp * (1.0 - Math.hypot(x + 0.5 - cx * l, y + 0.5 - cy * l) / (r * l)));
            }
        }
        return m;
    }

    private static double cosine(float[] a, float[] b) {
        double dot = 0, aa = 0, bb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            aa += (double) a[i] * a[i];
            bb += (double) b[i] * b[i];
        }
        return dot / Math.sqrt(Math.max(aa * bb, 1e-30));
    }

    /**
     * A frame's features made on the device from a {@link CudaSam3} tracker neck's levels ({@link
     * CudaSam3Tracker#features}) against the CPU reference's convolutions on the same levels' values: the top level
     * exactly (a copy of bf16), conv_s0 / conv_s1 within bf16; a pass on the device frame as on its values uploaded.
     * More frames than slots are held, so the oldest are brought back to the host and must still read the same. The
     * tiny model 64 wide (the device convolutions' least width; the fixtures' 32 is made on the CPU).
     */
    @Test
    void featuresAreMadeOnTheDeviceFromTheTrackerNecksLevels() {
        Sam3Config wide = new Sam3Config(Sam3Weights.TINY.vision(), Sam3Weights.TINY.text(),
                new Sam3Config.Detector(64, 4, 2, 64, 2, 64, 20, 1, 64, 7, 3, 64));
        Sam3TrackerConfig config = new Sam3TrackerConfig(112, 8, 64, 8, 7, 2, 64, 2048, 256, 4, 3, 2, 7, 16);
        StateDict sd = arranged(Sam3Weights.videoStateDict(wide, config), true);
        Sam3TrackerModel cpu = new Sam3TrackerModel(sd, config);
        int frames = TrackerFeatures.FRAMES + 2;
        List<TrackerFrame> made = new ArrayList<>();
        List<FrameFeatures> want = new ArrayList<>();
        try (Sam3Model detector = new Sam3Model(sd, Sam3ConfigInference.infer(sd), THREADS, CudaSam3.factory(0));
             CudaSam3Tracker onGpu = CudaSam3Tracker.open(sd, config, cpu, 0);
             CpuThreadPool pool = new CpuThreadPool(THREADS)) {
            int side = wide.vision().imageSize();
            Random rnd = new Random(89);
            for (int t = 0; t < frames; t++) {
                VisionFeatures v = detector.encodeImage(GpuTestSupport.randomBf16(rnd, 3 * side * side, 1));
                FeatureMap[] levels = detector.trackerLevels(v);
                TrackerFrame f = onGpu.features(pool, levels);
                assertTrue(!(f instanceof TrackerFrame.Host), "frame " + t + ": made on the device");
                want.add(cpu.features(pool, FeatureMap.values(levels)));
                made.add(f);
                for (FeatureMap l : levels) {
                    l.release();
                }
                v.release();
                FeatureMap memory = onGpu.encodeMemory(pool, f, scaledDisc(config.maskSize(), 0.5, 0.5, 0.3), true);
                List<Sam3TrackerModel.Spatial> spatial = List.of(new Sam3TrackerModel.Spatial(memory, 1));
                FrameFeatures exact = want.get(t);
                TrackerFrame uploaded = TrackerFrame.of(new FrameFeatures(exact.top(), exact.topPos(),
                        bf16(exact.s0()), bf16(exact.s1()), exact.side()));
                Propagation onDevice = onGpu.propagate(pool, f, spatial, List.of(), 16);
                Propagation fromHost = onGpu.propagate(pool, uploaded, spatial, List.of(), 16);
                GpuTestSupport.assertCosineAndRelL2("frame " + t + ": a pass on the device frame, or on its values",
                        fromHost.lowRes(), onDevice.lowRes(), 0.9999, 0.02);
                memory.release();
            }
            for (int t = 0; t < frames; t++) {
                FrameFeatures got = made.get(t).host();
                String what = "frame " + t + (t < frames - TrackerFeatures.FRAMES ? " (brought back)" : "");
                assertArrayEquals(want.get(t).top(), got.top(), what + ": the top level, copied");
                GpuTestSupport.assertCosineAndRelL2(what + ": conv_s0", want.get(t).s0(), got.s0(), 0.9999, 0.01);
                GpuTestSupport.assertCosineAndRelL2(what + ": conv_s1", want.get(t).s1(), got.s1(), 0.9999, 0.01);
                made.get(t).release();
            }
        }
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
            TrackerFrame f = features(cpu, pool, config, new Random(85));
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
            TrackerFrame a = features(cpu, pool, config, rnd), b = features(cpu, pool, config, rnd);
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

    /**
     * {@code objects} objects over {@code frames} frames, as a concept's tracks run: each starts on frame 0 with a
     * conditioning memory (slot numMaskmem - 1) and a pointer, then on frame t reads its conditioning memory, its
     * last numMaskmem - 1 tracked memories (slot = frames back - 1) and every pointer (at its distance), and stores
     * the frame's memory (a disc per object and frame, present or absent by turns) and pointer; a memory no later
     * frame reads is released. Three GPU trackers run it side by side, each on its own memories and pointers: the
     * default bank and a bank of {@code objects + 1} slots (most memories spilled to the host from frame 1 on) with
     * a frame's objects in one {@link CudaSam3Tracker#propagateAll}, and none, object by object ({@link
     * CudaSam3Tracker#propagate}); their propagations and memories must be bit for bit the same. The CPU reference
     * reads the banked tracker's memories (downloaded) and pointers: its propagations within {@link #check}'s
     * tolerances, its memories within the memory tolerances. The bank's slots taken are the memories held, 0 once
     * all are released; a released memory cannot be read, nor a closed tracker's.
     */
    private static void overFrames(String what, StateDict sd, Sam3TrackerConfig config, int objects, int frames,
            long seed) {
        Sam3TrackerModel cpu = new Sam3TrackerModel(sd, config);
        int k = config.numMaskmem(), window = Sam3TrackerConfig.MAX_OBJECT_POINTERS, side = config.maskSize();
        try (CpuThreadPool pool = new CpuThreadPool(THREADS);
             CudaSam3Tracker banked = CudaSam3Tracker.open(sd, config, cpu, 0);
             CudaSam3Tracker few = CudaSam3Tracker.open(sd, config, cpu, 0, objects + 1);
             CudaSam3Tracker none = CudaSam3Tracker.open(sd, config, cpu, 0, 0)) {
            CudaSam3Tracker[] gpus = {banked, few, none};
            Random rnd = new Random(seed);
            // [tracker][object][frame]: memories (null once released) and pointers
            FeatureMap[][][] mem = new FeatureMap[3][objects][frames];
            float[][][][] ptr = new float[3][objects][frames][];
            TrackerFrame f0 = features(cpu, pool, config, rnd);
            for (int o = 0; o < objects; o++) {
                float[] pointer = GpuTestSupport.randomBf16(rnd, config.hidden(), 1);
                float[] disc = disc(side, o, 0);
                for (int g = 0; g < 3; g++) {
                    mem[g][o][0] = gpus[g].encodeMemory(pool, f0, disc, true);
                    ptr[g][o][0] = pointer;
                }
            }
            for (int t = 1; t < frames; t++) {
                String at = what + ", frame " + t;
                TrackerFrame ft = features(cpu, pool, config, rnd);
                // the frame's objects: all at once on the banks (one wait; the small bank's runs cut by host
                // memories), one by one without a bank
                Propagation[][] all = new Propagation[3][objects];
                for (int g = 0; g < 2; g++) {
                    List<Sam3TrackerModel.Reads> reads = new ArrayList<>();
                    for (int o = 0; o < objects; o++) {
                        reads.add(new Sam3TrackerModel.Reads(spatial(mem[g][o], t, k), pointers(ptr[g][o], t, window)));
                    }
                    all[g] = gpus[g].propagateAll(pool, ft, reads, window).toArray(new Propagation[0]);
                    assertEquals(objects, all[g].length);
                }
                for (int o = 0; o < objects; o++) {
                    all[2][o] = none.propagate(pool, ft, spatial(mem[2][o], t, k), pointers(ptr[2][o], t, window),
                            window);
                }
                for (int o = 0; o < objects; o++) {
                    Propagation[] got = {all[0][o], all[1][o], all[2][o]};
                    assertSame(at + ", object " + o + ", a small bank", got[0], got[1]);
                    assertSame(at + ", object " + o + ", no bank", got[0], got[2]);
                    FeatureMap[] downloaded = new FeatureMap[t];
                    for (int u = 0; u < t; u++) {
                        downloaded[u] = mem[0][o][u] == null ? null : FeatureMap.of(mem[0][o][u].values());
                    }
                    check(at + ", object " + o + " against the CPU", sd, true,
                            cpu.propagate(pool, ft, spatial(downloaded, t, k), pointers(ptr[0][o], t, window), window),
                            got[0]);
                    boolean present = (o + t) % 3 != 0;
                    float[] disc = disc(side, o, t);
                    for (int g = 0; g < 3; g++) {
                        mem[g][o][t] = gpus[g].encodeMemory(pool, ft, disc, present);
                        ptr[g][o][t] = got[g].pointer();
                    }
                    float[] memory = mem[0][o][t].values();
                    assertArrayEquals(memory, mem[1][o][t].values(), at + ", object " + o + ": memory, small bank");
                    assertArrayEquals(memory, mem[2][o][t].values(), at + ", object " + o + ": memory, no bank");
                    GpuTestSupport.assertCosineAndRelL2(at + ", object " + o + ": memory against the CPU",
                            cpu.encodeMemory(pool, ft, disc, present).values(), memory, MEMORY_COSINE, MEMORY_REL_L2);
                    // frame t + 1 reads tracked frames t + 2 - k .. t: the one before goes
                    int gone = t + 1 - k;
                    if (gone >= 1) {
                        for (int g = 0; g < 3; g++) {
                            mem[g][o][gone].release();
                            mem[g][o][gone] = null;
                        }
                    }
                }
                int held = objects * (1 + Math.min(t, k - 1));
                assertEquals(held, banked.bankSlotsTaken(), at + ": the bank holds the memories held");
                assertEquals(0, banked.spilledMemories() + banked.uploadedMemories(), at + ": nothing via the host");
                assertEquals(objects + 1, few.bankSlotsTaken(), at + ": the small bank full");
                assertEquals(0, none.bankSlotsTaken());
            }
            assertTrue(few.spilledMemories() > 0 && few.uploadedMemories() > 0, "the small bank spilled");
            assertEquals((long) objects * frames, none.spilledMemories(), "no bank: every memory on the host");

            FeatureMap released = mem[0][0][frames - 1];
            released.release();
            released.release();   // twice: nothing
            assertThrows(IllegalStateException.class, released::values);
            TrackerFrame last = features(cpu, pool, config, rnd);
            List<Sam3TrackerModel.Spatial> reads = List.of(new Sam3TrackerModel.Spatial(released, 0));
            assertThrows(IllegalStateException.class, () -> banked.propagate(pool, last, reads, List.of(), window));
            int before = banked.bankSlotsTaken();
            for (int o = 0; o < objects; o++) {
                for (int u = 0; u < frames; u++) {
                    if (mem[0][o][u] != null) {
                        mem[0][o][u].release();
                    }
                }
            }
            assertTrue(before > 0);
            assertEquals(0, banked.bankSlotsTaken(), "every memory released: the bank is empty");
            FeatureMap kept = mem[1][0][0];
            few.close();
            assertThrows(IllegalStateException.class, kept::values, "a closed tracker's memory");
            kept.release();   // after close: nothing
        }
    }

    /** Object o's reads on frame t: its conditioning memory (frame 0) and tracked frames t - 1 .. t + 1 - k. */
    private static List<Sam3TrackerModel.Spatial> spatial(FeatureMap[] mem, int t, int k) {
        List<Sam3TrackerModel.Spatial> out = new ArrayList<>();
        out.add(new Sam3TrackerModel.Spatial(mem[0], k - 1));
        for (int back = 1; back < k && t - back >= 1; back++) {
            out.add(new Sam3TrackerModel.Spatial(mem[t - back], back - 1));
        }
        return out;
    }

    /** Every pointer before frame t (up to the window), at its distance. */
    private static List<Sam3TrackerModel.Pointer> pointers(float[][] ptr, int t, int window) {
        List<Sam3TrackerModel.Pointer> out = new ArrayList<>();
        out.add(new Sam3TrackerModel.Pointer(ptr[0], t));
        for (int d = 1; d < window && t - d >= 1; d++) {
            out.add(new Sam3TrackerModel.Pointer(ptr[t - d], d));
        }
        return out;
    }

    /** A disc that moves with the frame, one place per object. */
    private static float[] disc(int side, int object, int frame) {
        return scaledDisc(side, 0.3 + 0.15 * object + 0.02 * frame, 0.35 + 0.1 * object, 0.15 + 0.02 * object);
    }

    private static void assertSame(String what, Propagation want, Propagation got) {
        assertArrayEquals(want.lowRes(), got.lowRes(), what + ": low-res logits");
        assertEquals(want.objectScore(), got.objectScore(), what + ": object score");
        assertEquals(want.iou(), got.iou(), what + ": IoU");
        assertArrayEquals(want.pointer(), got.pointer(), what + ": pointer");
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
    static TrackerFrame features(Sam3TrackerModel cpu, CpuThreadPool pool, Sam3TrackerConfig c, Random rnd) {
        int g = c.grid(), d = c.hidden();
        float[][] levels = {GpuTestSupport.randomBf16(rnd, 16 * g * g * d, 1),
            GpuTestSupport.randomBf16(rnd, 4 * g * g * d, 1), GpuTestSupport.randomBf16(rnd, g * g * d, 1)};
        FrameFeatures f = cpu.features(pool, levels);
        return TrackerFrame.of(new FrameFeatures(f.top(), f.topPos(), bf16(f.s0()), bf16(f.s1()), f.side()));
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
