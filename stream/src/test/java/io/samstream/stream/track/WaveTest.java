package io.samstream.stream.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link Wave}: frames share the decoder and post-processing calls; a frame at fault fails alone. */
class WaveTest {
    static final SamConfig TINY = new SamConfig(64, 8, 32, 4, 2, 64, 4, new int[] {1, 3}, 32, 8, 2, 8, 64, 2, 3, 3, 32);

    /** Decodes a prompt set to a plane filled with its box's x0; refuses a box whose x0 is negative. */
    static final class FakeBackend extends DecodeOnlyBackend {
        final AtomicInteger waves = new AtomicInteger();
        final AtomicInteger postWaves = new AtomicInteger();

        FakeBackend() {
            super(TINY, "fake");
        }

        @Override
        public DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask) {
            if (prompt.box()[0] < 0) {
                throw new IllegalArgumentException("box x0 " + prompt.box()[0] + " is negative");
            }
            int l = TINY.lowResSize();
            float[] v = new float[l * l];
            java.util.Arrays.fill(v, prompt.box()[0]);
            return new DecoderOutput(new Tensor(v, 1, l, l), new float[] {0.9f});
        }

        @Override
        public List<List<DecoderOutput>> decodeWave(List<DecodeRequest> requests) {
            waves.incrementAndGet();
            return super.decodeWave(requests);
        }

        @Override
        public List<List<MaskSummary>> postprocessWave(List<MaskRequest> requests) {
            postWaves.incrementAndGet();
            return super.postprocessWave(requests);
        }
    }

    /** One prompt set (a box at x0), its plane post-processed at 16 x 16. */
    static final class BoxStep implements FrameStep {
        final float x0;
        final ImageEmbedding embedding = ImageEmbedding.of(new Tensor(new float[32 * 4 * 4], 1, 32, 4, 4));
        Tensor chosen;

        BoxStep(float x0) {
            this.x0 = x0;
        }

        @Override
        public List<SamBackend.DecodeRequest> requests() {
            return List.of(new SamBackend.DecodeRequest(embedding,
                    List.of(new Prompt(null, null, new float[] {x0, 0, x0 + 8, 8}, null)), false));
        }

        @Override
        public void decoded(List<List<DecoderOutput>> outputs) {
            chosen = outputs.get(0).get(0).lowResLogits();
        }

        @Override
        public SamBackend.MaskRequest masks() {
            return new SamBackend.MaskRequest(chosen, new ImageSize(64, 64), new ImageSize(16, 16));
        }

        @Override
        public TrackedFrame finish(List<MaskSummary> summaries) {
            // An all-positive plane (x0 > 0) is a full mask; x0 = 0 is an empty one.
            return new TrackedFrame(List.of(), summaries.get(0).area() > 0 ? List.of(1) : List.of());
        }
    }

    @Test
    void framesShareOneDecoderAndOnePostprocessingCall() {
        FakeBackend backend = new FakeBackend();
        List<FrameStep> steps = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            steps.add(new BoxStep(i));
        }
        Wave.Result r = Wave.run(backend, steps, ForkJoinPool.commonPool());
        assertEquals(1, backend.waves.get());
        assertEquals(1, backend.postWaves.get());
        for (int i = 0; i < 5; i++) {
            Wave.Outcome o = r.outcomes().get(i);
            assertNull(o.error());
            assertEquals(i > 0 ? List.of(1) : List.of(), o.frame().lost(), "frame " + i + " got its own plane");
        }
    }

    @Test
    void aFrameTheBackendRefusesFailsAloneAndTheOthersGoOn() {
        FakeBackend backend = new FakeBackend();
        List<FrameStep> steps = List.of(new BoxStep(3), new BoxStep(-1), new BoxStep(5));
        Wave.Result r = Wave.run(backend, steps, Runnable::run);
        assertNull(r.outcomes().get(0).error());
        assertNotNull(r.outcomes().get(0).frame());
        assertTrue(r.outcomes().get(1).error() instanceof IllegalArgumentException, "the refused frame's own error");
        assertTrue(r.outcomes().get(1).error().getMessage().contains("negative"));
        assertNull(r.outcomes().get(2).error());
        assertEquals(List.of(1), r.outcomes().get(2).frame().lost());
        // The shared call, then each frame on its own.
        assertEquals(1 + 3, backend.waves.get());
    }
}
