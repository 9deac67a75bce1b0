package io.samstream.stream.track;

import io.samstream.config.EngineSettings;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.predict.AutomaticMaskGenerator;
import io.samstream.gpu.predict.GeneratedMask;
import io.samstream.gpu.model.ImageEmbedding;
import java.util.ArrayList;
import java.util.List;

/**
 * Discovery by SAM's automatic mask generation ({@link AutomaticMaskGenerator}): the point grid, multimask
 * decoding in batches, the predicted-IoU and stability filters, box NMS and the minimum area of
 * {@code samstream.discovery}. Grid points on pixels that tracked objects cover are skipped (each point
 * is a decoder run; those would only find the tracked objects again). Stateless: streams share one.
 */
public final class GeneratorDiscovery implements ObjectDiscovery {
    /** Grid points decoded together (the reference's batch). */
    static final int POINTS_PER_BATCH = 64;

    private final AutomaticMaskGenerator generator;

    public GeneratorDiscovery(SamBackend backend, EngineSettings.Discovery settings) {
        this.generator = new AutomaticMaskGenerator(backend, new AutomaticMaskGenerator.Settings(
                settings.pointsPerSide(), POINTS_PER_BATCH, (float) settings.predIouThreshold(),
                (float) settings.stabilityThreshold(), MaskSummary.STABILITY_OFFSET, (float) settings.nmsIou(),
                settings.minArea()));
    }

    @Override
    public List<Found> discover(ImageEmbedding embedding, int width, int height, boolean[] covered) {
        List<GeneratedMask> masks = generator.generate(embedding, width, height, covered);
        List<Found> found = new ArrayList<>(masks.size());
        for (GeneratedMask m : masks) {
            found.add(new Found(m.lowResLogits(), m.predictedIou(), m.stability(), m.box(), m.area()));
        }
        return found;
    }
}
