package io.samstream.gpu.sam2;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * SAM 2.1 video tracking in streaming form: frames arrive one at a time and are never revisited; each object
 * keeps a bounded {@link MemoryBank}. What one {@link #track} call does for a frame is what SAM2VideoPredictor
 * computes for it when propagating forward over a video whose length is unknown:
 * <ul>
 *   <li>objects already tracked: memory attention over their bank, SAM heads without prompts (several
 *       masks, the best by predicted IoU), memory encoded from the sigmoid of the mask, stored as a tracked
 *       frame;
 *   <li>objects prompted on this frame (new ids): SAM heads on the features plus no_mem_embed, several masks
 *       for at most one point, memory encoded from the binarized mask, stored as a conditioning frame.
 * </ul>
 * A prompt for an id already tracked starts that object afresh (its bank is dropped). Objects are independent
 * (no non-overlap constraint, as the predictor's default); hole filling is not done.
 */
public final class Sam2VideoTracker implements Sam2Tracking.StreamTracker {
    /** Conditioning frames kept per object (Meta keeps all; a stream re-prompted forever needs a bound). */
    public static final int DEFAULT_MAX_CONDITIONING = 16;

    private final Sam2Model model;
    private final int maxConditioning;
    private final Map<Integer, MemoryBank> banks = new LinkedHashMap<>();
    private int frame;

    public Sam2VideoTracker(Sam2Model model) {
        this(model, DEFAULT_MAX_CONDITIONING);
    }

    public Sam2VideoTracker(Sam2Model model, int maxConditioning) {
        this.model = model;
        this.maxConditioning = maxConditioning;
    }

    /** The index the next frame gets (0 for the first). */
    public int nextFrame() {
        return frame;
    }

    @Override
    public Set<Integer> objects() {
        return java.util.Collections.unmodifiableSet(banks.keySet());
    }

    public MemoryBank bank(int objectId) {
        return banks.get(objectId);
    }

    @Override
    public void remove(int objectId) {
        banks.remove(objectId);
    }

    @Override
    public void close() {
        banks.clear();
    }

    /** {@link #track(float[], List)} of an 8-bit RGB frame at the model's size, normalized as the predictor does. */
    @Override
    public List<ObjectResult> track(byte[] rgb, List<ObjectPrompt> prompts) {
        return track(model.normalize(rgb), prompts);
    }

    /**
     * Tracks every object on the next frame (a normalized planar [3, S, S] image, see
     * {@link Sam2Model#normalize}) and adds the prompted ones; results in the order objects were added.
     */
    public List<ObjectResult> track(float[] image, List<ObjectPrompt> prompts) {
        int t = frame++;
        FrameFeatures f = model.encodeImage(image);
        Map<Integer, ObjectPrompt> byId = new LinkedHashMap<>();
        for (ObjectPrompt p : prompts) {
            if (byId.put(p.objectId(), p) != null) {
                throw new IllegalArgumentException("two prompts for object " + p.objectId() + " on one frame");
            }
        }
        for (Integer id : byId.keySet()) {
            banks.remove(id);
        }
        int side = model.config().lowResSize();
        List<ObjectResult> results = new ArrayList<>();
        for (Map.Entry<Integer, MemoryBank> e : banks.entrySet()) {
            float[] image2 = model.conditioned(f, e.getValue(), t);
            Sam2Model.Heads h = model.heads(image2, f, new float[0][], new int[0], true);
            float[] mem = model.encodeMemory(f, h.lowRes(), h.objectScore(), false);
            e.getValue().addTracked(new MemoryBank.Entry(t, mem, h.pointer()));
            results.add(new ObjectResult(e.getKey(), h.lowRes(), side, h.objectScore(), h.pointer(), false, h.predictedIou()));
        }
        for (ObjectPrompt p : byId.values()) {
            float[][] pts = p.allPoints();
            Sam2Model.Heads h = model.heads(model.withoutMemory(f), f, pts, p.allLabels(), Sam2Model.multimask(pts.length));
            float[] mem = model.encodeMemory(f, h.lowRes(), h.objectScore(), true);
            MemoryBank bank = new MemoryBank(model.config().numMaskmem(), maxConditioning);
            bank.addConditioning(new MemoryBank.Entry(t, mem, h.pointer()));
            banks.put(p.objectId(), bank);
            results.add(new ObjectResult(p.objectId(), h.lowRes(), side, h.objectScore(), h.pointer(), true, h.predictedIou()));
        }
        return results;
    }
}
