package io.samstream.stream.track;

import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tracking off ({@code samstream.tracking.enabled = off}): every frame is decoded with its stream's prompts as they
 * are, nothing carried from frame to frame. Lone points decode SAM's three masks and take the best by predicted IoU;
 * the rest the single-mask output.
 */
public final class FixedPrompts implements Tracking {
    private static final Logger log = LoggerFactory.getLogger(FixedPrompts.class);

    private final SamBackend backend;

    public FixedPrompts(SamBackend backend) {
        this.backend = backend;
    }

    @Override
    public WaveTracker open(String stream, TrackingMeters meters) {
        return new WaveTracker() {
            @Override
            public FrameStep begin(long frame, int width, int height, ImageEmbedding embedding, TrackPrompts prompts) {
                return step(backend, width, height, embedding, prompts.objects().stream()
                        .map(TrackPrompts.Seed::prompt).toList());
            }

            @Override
            public void takeUp(TrackingState state) {
                log.debug("stream {}: tracking is off: its stored {} state is not taken up", stream, state.key());
            }

            @Override
            public void keepStateEvery(int frames) {}

            @Override
            public Optional<TrackingState> takeState(long frame) {
                return Optional.empty();
            }

            @Override
            public Optional<TrackingState> stateAfter(long frame) {
                return Optional.empty();
            }

            @Override
            public void close() {}
        };
    }

    /**
     * One frame's fixed prompts as a {@link FrameStep}: lone points (multimask, the best of SAM's masks by predicted
     * IoU) and the rest (single mask) as two requests; every object post-processed.
     *
     * @param objects the frame's objects, resolved for its size
     * @throws IllegalArgumentException when a prompt lies outside the frame (names the object)
     */
    public static FrameStep step(SamBackend backend, int width, int height, ImageEmbedding embedding,
            List<ObjectPrompt> objects) {
        FrameGeometry g = new FrameGeometry(width, height, backend.config().imageSize(), backend.config().lowResSize());
        List<List<Integer>> which = new ArrayList<>(2);
        List<SamBackend.DecodeRequest> requests = new ArrayList<>(2);
        for (boolean multimask : new boolean[] {false, true}) {
            List<Integer> idx = new ArrayList<>();
            List<Prompt> prompts = new ArrayList<>();
            for (int i = 0; i < objects.size(); i++) {
                if (FrameGeometry.wantsMultimask(objects.get(i)) == multimask) {
                    idx.add(i);
                    prompts.add(g.modelPrompt(objects.get(i)));
                }
            }
            if (!prompts.isEmpty()) {
                which.add(idx);
                requests.add(new SamBackend.DecodeRequest(embedding, prompts, multimask));
            }
        }
        return new FrameStep() {
            private final MaskReadout.Item[] items = new MaskReadout.Item[objects.size()];

            @Override
            public List<SamBackend.DecodeRequest> requests() {
                return requests;
            }

            @Override
            public void decoded(List<List<DecoderOutput>> outputs) {
                for (int r = 0; r < which.size(); r++) {
                    for (int k = 0; k < which.get(r).size(); k++) {
                        // The best of SAM's masks by predicted IoU (the only one without multimask output),
                        // post-processed where the decoder left it.
                        DecoderOutput.Plane best = outputs.get(r).get(k).best();
                        int at = which.get(r).get(k);
                        items[at] = new MaskReadout.Item(objects.get(at).id(), best,
                                best.output().iouPredictions()[best.index()]);
                    }
                }
            }

            @Override
            public SamBackend.MaskRequest masks() {
                return items.length == 0 ? null : MaskReadout.request(Arrays.asList(items), g);
            }

            @Override
            public TrackedFrame finish(List<MaskSummary> summaries) {
                return new TrackedFrame(items.length == 0 ? List.of()
                        : MaskReadout.readouts(Arrays.asList(items), g, summaries), List.of());
            }
        };
    }
}
