package io.samstream.gpu.cuda.sam;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend.DecodeRequest;
import io.samstream.gpu.tensor.Tensor;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How the CUDA mask decoder cuts a wave into batches and stages their prompts, on the host (no GPU needed). */
class DecodeChunkTest {
    private static final int C = 4, E = 2, L = 4;

    private static ImageEmbedding image() {
        return ImageEmbedding.of(new Tensor(new float[C * E * E], 1, C, E, E));
    }

    private static Prompt point(float x, float y) {
        return new Prompt(new float[][] {{x, y}}, new int[] {1}, null, null);
    }

    private static Prompt box() {
        return new Prompt(null, null, new float[] {1, 2, 3, 4}, null);
    }

    @Test
    void setsOfOneModeAndSparseCountShareABatchInRequestOrder() {
        List<DecodeRequest> wave = List.of(new DecodeRequest(image(), List.of(point(1, 1), box(), point(2, 2)), true),
                new DecodeRequest(image(), List.of(box(), point(3, 3)), true),
                new DecodeRequest(image(), List.of(point(4, 4)), false));
        List<DecodeChunk> chunks = DecodeChunk.plan(wave, 8, C, E, L);
        // (multimask, 2 tokens: a point + padding), (multimask, 2 box corners: also 2 tokens), (single, 2 tokens)
        assertEquals(2, chunks.size());
        DecodeChunk multi = chunks.get(0);
        assertTrue(multi.multimask);
        assertEquals(2, multi.ns);
        assertEquals(List.of(0, 1), multi.images);
        assertEquals(List.of(3, 2), multi.perImage);
        assertEquals("[0, 0] [0, 1] [0, 2] [1, 0] [1, 1]", sets(multi));
        assertEquals(List.of(2), chunks.get(1).images);
        assertTrue(!chunks.get(1).multimask);
    }

    @Test
    void aBatchIsCutAtMaxSetsAndAtTheImageLimit() {
        List<DecodeChunk> bySets = DecodeChunk.plan(List.of(new DecodeRequest(image(),
                Collections.nCopies(5, point(1, 1)), true)), 2, C, E, L);
        assertEquals(3, bySets.size());
        assertEquals(List.of(2, 2, 1), bySets.stream().map(ch -> ch.sets.size()).toList());
        List<DecodeRequest> manyImages = new ArrayList<>();
        for (int i = 0; i < CudaMaskDecoder.MAX_IMAGES + 1; i++) {
            manyImages.add(new DecodeRequest(image(), List.of(point(1, 1)), true));
        }
        List<DecodeChunk> byImages = DecodeChunk.plan(manyImages, 64, C, E, L);
        assertEquals(2, byImages.size());
        assertEquals(CudaMaskDecoder.MAX_IMAGES, byImages.get(0).images.size());
        assertEquals(List.of(CudaMaskDecoder.MAX_IMAGES), byImages.get(1).images);
    }

    @Test
    void badRequestsAreRefusedByNameBeforeAnyBatch() {
        float[][] many = new float[CudaMaskDecoder.MAX_SPARSE][];
        int[] labels = new int[many.length];
        Arrays.fill(many, new float[] {1, 1});
        IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class, () -> DecodeChunk.plan(
                List.of(new DecodeRequest(image(), List.of(new Prompt(many, labels, null, null)), true)), 8, C, E, L));
        assertTrue(tooMany.getMessage().startsWith("prompt set 0 has " + (many.length + 1) + " sparse tokens"),
                tooMany.getMessage());
        ImageEmbedding wrong = ImageEmbedding.of(new Tensor(new float[C * 9], 1, C, 3, 3));
        IllegalArgumentException shape = assertThrows(IllegalArgumentException.class, () -> DecodeChunk.plan(
                List.of(new DecodeRequest(wrong, List.of(point(1, 1)), true)), 8, C, E, L));
        assertTrue(shape.getMessage().startsWith("embedding must be [1, 4, 2, 2]"), shape.getMessage());
    }

    @Test
    void promptsAreStagedAsTheKernelsReadThem() {
        Tensor mask = new Tensor(new float[L * L], 1, L, L);
        Prompt both = new Prompt(new float[][] {{3, 5}}, new int[] {0}, new float[] {1, 2, 3, 4}, mask);
        List<DecodeRequest> wave = List.of(new DecodeRequest(image(), List.of(both), true));
        DecodeChunk chunk = DecodeChunk.plan(wave, 8, C, E, L).get(0);
        assertEquals(3, chunk.ns, "a point, no padding point with a box, two corners");
        FloatBuffer coords = FloatBuffer.allocate(6);
        IntBuffer codes = IntBuffer.allocate(3);
        IntBuffer slots = IntBuffer.allocate(1);
        FloatBuffer masks = FloatBuffer.allocate(L * L);
        assertEquals(1, chunk.writePrompts(wave, 16f, L, coords, codes, slots, masks));
        assertArrayEquals(new float[] {3.5f / 16, 5.5f / 16, 1.5f / 16, 2.5f / 16, 3.5f / 16, 4.5f / 16},
                coords.array());
        assertArrayEquals(new int[] {0, 2, 3}, codes.array());
        assertArrayEquals(new int[] {0}, slots.array());
    }

    private static String sets(DecodeChunk ch) {
        return String.join(" ", ch.sets.stream().map(Arrays::toString).toList());
    }
}
