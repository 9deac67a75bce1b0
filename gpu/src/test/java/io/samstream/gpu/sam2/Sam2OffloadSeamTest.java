package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The {@link Sam2Offload} seam: a model whose heavy parts run elsewhere builds no CPU version of them and reaches
 * them only through the offload. Here the offload is the CPU parts themselves, so the fixture clip must come out as
 * the reference's (the same checks as {@code Sam2ReferenceParityTest}), with every part called.
 */
class Sam2OffloadSeamTest {
    /** The CPU parts behind the seam, counting their calls. */
    private static final class CpuParts implements Sam2Offload {
        final AtomicInteger images = new AtomicInteger(), attentions = new AtomicInteger(), memories = new AtomicInteger();
        private final Sam2Config config;
        private final CpuThreadPool pool = new CpuThreadPool(Sam2ReferenceParityTest.THREADS);
        private final Sam2ImageEncoder imageEncoder;
        private final MemoryAttention memoryAttention;
        private final MemoryEncoder memoryEncoder;
        private final float[] noObject;

        CpuParts(StateDict sd, Sam2Config config) {
            this.config = config;
            this.imageEncoder = new Sam2ImageEncoder(sd, config);
            this.memoryAttention = new MemoryAttention(sd, config);
            this.memoryEncoder = new MemoryEncoder(sd, config);
            this.noObject = sd.get("no_obj_embed_spatial", 1, config.memDim()).data();
        }

        @Override
        public FrameFeatures encodeImage(float[] planarImage) {
            images.incrementAndGet();
            return imageEncoder.forward(pool, planarImage);
        }

        @Override
        public float[] attendMemory(float[] top, float[] memory, float[] memoryPos, int m, int pointerTokens) {
            attentions.incrementAndGet();
            int f = config.featureSize();
            return memoryAttention.forward(pool, top, PositionEncodings.sine2d(f, f, config.hidden()), f * f, memory,
                    memoryPos, m, pointerTokens);
        }

        @Override
        public float[] encodeMemory(float[] pixFeat, float[] lowRes, boolean fromPrompt, boolean absent) {
            memories.incrementAndGet();
            float[] mem = memoryEncoder.encode(pool, pixFeat, MemoryEncoder.scaledMask(lowRes, config.lowResSize(),
                    config.imageSize(), fromPrompt));
            for (int i = 0; i < mem.length; i++) {
                mem[i] = Sam2Model.roundToBf16(absent ? mem[i] + noObject[i % config.memDim()] : mem[i]);
            }
            return mem;
        }

        @Override
        public String describe() {
            return "the CPU parts behind the seam";
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    @Test
    void aModelWithAnOffloadRunsItsPartsThereAndMatchesTheReference() throws Exception {
        StateDict sd = CheckpointLoader.load(Sam2ReferenceParityTest.DIR.resolve("checkpoint.pt"));
        Sam2Config config = Sam2ConfigInference.infer(sd, Sam2ReferenceParityTest.TINY);
        CpuParts parts = new CpuParts(sd, config);
        try (Sam2Model model = new Sam2Model(sd, config, Sam2ReferenceParityTest.THREADS, parts)) {
            assertEquals("the CPU parts behind the seam", model.describe());
            new FixtureRun(Sam2ReferenceParityTest.DIR, model).checkFrames(1e-5);
        }
        // 12 frames + frame 0's features kept by the run; 17 tracked object-frames (object 1 on frames 1-11, object
        // 2 on 6-11); a memory for each of the 19 object-frames
        assertEquals(13, parts.images.get());
        assertEquals(17, parts.attentions.get());
        assertEquals(19, parts.memories.get());
    }
}
