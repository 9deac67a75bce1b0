package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ModelPrecision;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.GpuTestBase;
import io.samstream.gpu.cuda.GpuTestSupport;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Neck;
import io.samstream.gpu.sam3.Sam3Shapes;
import io.samstream.gpu.sam3.Sam3Weights;
import io.samstream.gpu.tensor.Npy;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * SAM 3's neck on the GPU (bf16) against the fp32 CPU reference ({@link Sam3Neck#cpu}) on the same trunk map: the
 * tiny fixture model (width 48, so the second 4x step's 12 channels run zero-padded to 16), also against Meta's own
 * levels ({@code fpn0..2.npy}); random weights at the release's shapes (72x72 map of width 1024 to 288², 144² and 72²
 * at 256); and both necks of a video checkpoint through {@link CudaSam3}, from the trunk's output left on the device
 * and from an uploaded map. A wrong tap order in the scatter or a wrong im2col layout puts the cosine far below 0.999.
 */
class CudaSam3NeckGpuTest extends GpuTestBase {
    private static final double MIN_COSINE = 0.999, MAX_REL_L2 = 0.03;

    @Test
    void tinyFixtureNeckMatchesTheCpuReferenceAndMeta() throws IOException {
        StateDict checkpoint = CheckpointLoader.load(CudaSam3VitGpuTest.TINY.resolve("sam3_tiny.pt"));
        Sam3Config config = Sam3ConfigInference.infer(checkpoint);
        int g = config.vision().grid(), d = config.detector().dModel();
        float[] trunk = CudaSam3VitGpuTest.channelsLast(Npy.read(CudaSam3VitGpuTest.TINY.resolve("trunk.npy")).toFloats(),
                config.vision().embedDim(), g * g);
        float[][] out = compare("tiny fixture", Sam3Checkpoint.detector(checkpoint), Sam3Neck.DETECTOR, config, trunk);
        for (int i = 0; i < 3; i++) {
            int side = g << (2 - i);
            float[] meta = CudaSam3VitGpuTest.channelsLast(Npy.read(CudaSam3VitGpuTest.TINY.resolve("fpn" + i + ".npy")).toFloats(), d,
                    side * side);
            check("tiny fixture level " + i + " against Meta's fpn" + i + ".npy", meta, out[i]);
        }
    }

    @Test
    void releaseShapesMatchTheCpuReference() {
        Sam3Config release = CudaSam3Test.RELEASE;
        Map<String, int[]> shapes = Sam3Shapes.detectorPart(release, Sam3Neck.DETECTOR);
        StateDict sd = Sam2Shapes.random(shapes, 43);
        int g = release.vision().grid();
        compare("release shapes", sd, Sam3Neck.DETECTOR, release, map(g * g * release.vision().embedDim(), 44));
    }

    @Test
    void bothNecksOfAVideoCheckpointThroughTheBackend() {
        Sam3Config config = Sam3Weights.TINY;
        StateDict sd = Sam3Checkpoint.detector(Sam3Weights.videoStateDict(config, Sam3Weights.TINY_TRACKER));
        float[] image = CudaSam3VitGpuTest.image(config.vision().imageSize(), 45);
        try (CpuThreadPool threads = new CpuThreadPool(2);
             CudaSam3 backend = CudaSam3.open(sd, config, 0, ModelPrecision.BF16);
             Sam3Neck cpuNeck = Sam3Neck.cpu().open(sd, Sam3Neck.DETECTOR, config, threads);
             Sam3Neck cpuTracker = Sam3Neck.cpu().open(sd, Sam3Neck.TRACKER, config, threads)) {
            assertNotNull(backend.trackerNeck(), "the video checkpoint's second neck");
            FeatureMap trunk = backend.trunk().forward(image);
            FeatureMap[] onDevice = backend.neck().forward(trunk);        // the trunk's slot, read in place
            float[][] tracker = FeatureMap.values(backend.trackerNeck().forward(trunk));
            FeatureMap host = FeatureMap.of(trunk.values());                 // on the CPU: uploaded first
            float[][] uploaded = FeatureMap.values(backend.neck().forward(host));
            float[][] ref = FeatureMap.values(cpuNeck.forward(host));
            float[][] refTracker = FeatureMap.values(cpuTracker.forward(host));
            float[][] fromDevice = FeatureMap.values(onDevice);
            for (int i = 0; i < 3; i++) {
                assertArrayEquals(fromDevice[i], uploaded[i], "level " + i + ": the trunk's bf16 slot and its upload");
                check("detector neck level " + i, ref[i], fromDevice[i]);
                check("tracker neck level " + i, refTracker[i], tracker[i]);
            }
            // more images than slots, none released: the oldest are spilled to the CPU, never overwritten
            List<FeatureMap[]> held = new ArrayList<>();
            for (int k = 0; k <= CudaSam3.FRAMES; k++) {
                held.add(backend.neck().forward(backend.trunk().forward(CudaSam3VitGpuTest.image(
                        config.vision().imageSize(), 46 + k))));
            }
            assertTrue(backend.spills() > 0, "a full ring spills");
            float[] again = backend.neck().forward(backend.trunk().forward(CudaSam3VitGpuTest.image(
                    config.vision().imageSize(), 46)))[0].values();
            assertArrayEquals(again, held.get(0)[0].values(), "the first image's spilled 4x level");
            FeatureMap released = held.get(CudaSam3.FRAMES)[2];
            released.release();
            assertThrows(IllegalStateException.class, released::values, "a released map that was never read");
            assertEquals("ViT trunk, necks, fusion encoder, decoder and mask head on " + backend.neck().describe(),
                    backend.describe());
        }
    }

    /** Runs both necks on {@code trunk}, checks each level, returns the GPU's levels. */
    private static float[][] compare(String what, StateDict sd, String prefix, Sam3Config config, float[] trunk) {
        float[][] ref;
        try (CpuThreadPool threads = new CpuThreadPool(Runtime.getRuntime().availableProcessors());
             Sam3Neck cpu = Sam3Neck.cpu().open(sd, prefix, config, threads)) {
            ref = FeatureMap.values(cpu.forward(FeatureMap.of(trunk)));
        }
        long mark = gpu.pool.mark();
        try {
            CudaSam3Neck neck = new CudaSam3Neck(sd, prefix, config, gpu.kernels, gpu.stream,
                    new DeviceWeights(gpu.pool, gpu.stream, gpu.staging), CudaSam3Neck.Workspace.allocate(gpu.pool,
                    config));
            DeviceBuffer in = gpu.pool.allocateBf16(trunk.length, "trunk map");
            StagedCopy.uploadBf16(gpu.stream, gpu.staging, trunk, in);
            neck.forward(in);
            float[][] out = new float[3][];
            DeviceBuffer[] levels = neck.workspace().levels();
            for (int i = 0; i < 3; i++) {
                out[i] = StagedCopy.downloadBf16(gpu.stream, gpu.staging, levels[i], neck.levelValues(i));
                check(what + " level " + i, ref[i], out[i]);
            }
            return out;
        } finally {
            gpu.pool.release(mark);
        }
    }

    private static void check(String what, float[] ref, float[] out) {
        GpuTestSupport.assertCosineAndRelL2(what, ref, out, MIN_COSINE, MAX_REL_L2);
    }

    /** A trunk-like map: unit-scale noise plus a smooth pattern. */
    private static float[] map(int n, long seed) {
        Random rnd = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) (rnd.nextGaussian() + Math.sin(i * 0.001));
        }
        return x;
    }
}
