package io.samstream.gpu.parity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.GpuTests;
import io.samstream.gpu.cuda.sam.CudaSamBackend;
import io.samstream.gpu.cuda.sam.CudaSamOptions;
import io.samstream.gpu.model.EmbeddingPool;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The tracker's appearance maps (its search for lost objects, {@code appearance_ops.cuh}): computed in the ring's
 * slots by {@link CudaSamBackend#cellSimilarities}, they equal the host reference {@link
 * EmbeddingPool#cellSimilarity} on the downloaded embedding, for windows from one cell to more than the image, image
 * sizes short of the embedding (padding left out) and a foreign embedding (mapped on the host) among ring slots.
 * Skips where no GPU is usable.
 */
@Tag("gpu")
class AppearanceSearchGpuTest {
    @BeforeEach
    void requireGpu() {
        GpuTests.assumeGpu();
    }

    @Test
    void appearanceMapsOfTheRingAsOnTheHost() throws IOException {
        StateDict weights = CheckpointLoader.load(CudaParityGpuTest.FIXTURES.resolve("tiny256").resolve("model.pth"));
        SamConfig config = SamConfigInference.infer(weights);
        int side = config.embeddingSize();
        try (CudaSamBackend cuda = new CudaSamBackend(weights, config,
                CudaSamOptions.builder(2).maxPromptSets(8).embeddingSlots(4).build())) {
            List<ImageEmbedding> ring = cuda.embedFrames(EmbeddingPathGpuTest.frames(2, 11));
            // An object's look: frame 0's mean over a patch of cells; the image's mean of each frame.
            float[] patch = new float[side * side];
            for (int y = side / 4; y < side / 2; y++) {
                Arrays.fill(patch, y * side + side / 4, y * side + side / 2, 1f);
            }
            float[] all = new float[side * side];
            Arrays.fill(all, 1f);
            List<float[]> pooled = cuda.poolEmbeddings(List.of(new EmbeddingPool.Request(ring.get(0), patch),
                    new EmbeddingPool.Request(ring.get(0), all), new EmbeddingPool.Request(ring.get(1), all)));
            float[] look = pooled.get(0);
            int[][] shapes = {{side, side, 1, 1}, {side, side * 3 / 4, 3, 2}, {side / 2, side - 1, 4, 5},
                    {side, side, side, side}, {side - 3, side / 3, 2 * side, 1}};
            List<EmbeddingPool.CellRequest> requests = new ArrayList<>();
            for (int k = 0; k < shapes.length; k++) {
                int f = k % 2;
                int[] s = shapes[k];
                requests.add(new EmbeddingPool.CellRequest(ring.get(f), look, pooled.get(1 + f), s[0], s[1], s[2], s[3]));
            }
            requests.add(new EmbeddingPool.CellRequest(ImageEmbedding.of(ring.get(1).toTensor()), look, pooled.get(2),
                    side, side, 3, 3));
            List<float[]> got = cuda.cellSimilarities(requests);
            assertEquals(requests.size(), got.size());
            for (int k = 0; k < requests.size(); k++) {
                EmbeddingPool.CellRequest r = requests.get(k);
                float[] want = EmbeddingPool.cellSimilarity(r.embedding().toTensor(), r.look(), r.mean(), r.cols(),
                        r.rows(), r.windowCols(), r.windowRows());
                assertEquals(r.cols() * r.rows(), got.get(k).length, "request " + k);
                for (int i = 0; i < want.length; i++) {
                    assertEquals(want[i], got.get(k)[i], 1e-3, "request " + k + ", cell (" + i % r.cols() + ", "
                            + i / r.cols() + ")");
                }
            }
            // A window of the patch's size over the patch itself is the look: 1.
            int w = side / 4;
            int at = side / 4 + (w - 1) / 2;
            float[] own = cuda.cellSimilarities(List.of(new EmbeddingPool.CellRequest(ring.get(0), look, pooled.get(1),
                    side, side, w, w))).get(0);
            assertEquals(1.0, own[at * side + at], 1e-3, "the look's own patch");
            assertEquals(1.0, max(own), 1e-3, "nothing looks more like it than itself");
            assertThrows(IllegalArgumentException.class, () -> cuda.cellSimilarities(List.of(
                    new EmbeddingPool.CellRequest(ring.get(0), look, pooled.get(1), side + 1, side, 1, 1))));
            ring.forEach(ImageEmbedding::close);
        }
    }

    private static double max(float[] v) {
        double m = Double.NEGATIVE_INFINITY;
        for (float x : v) {
            m = Math.max(m, x);
        }
        return m;
    }
}
