package io.samstream.gpu.sam3.video;

import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import java.util.List;

/**
 * The first memory of objects that start together on a frame, from their detections' masks, as Meta's
 * {@code _tracker_add_new_objects} makes it (each mask through {@code add_new_mask}, then {@code
 * propagate_in_video_preflight} for the batch):
 * <ol>
 *   <li>each mask's logits are upsampled bilinearly to the memory encoder's square and binarized; that mask makes
 *       the object's pointer ({@link Sam3TrackerModel#pointerFromMask}) and its object score (+10 if not empty,
 *       else -10);</li>
 *   <li>the binary mask goes to the frame's size (antialiased, > 0.5), where an object started later takes the
 *       pixels it shares with earlier ones;</li>
 *   <li>back at low resolution (antialiased, as +-1024 logits), then bilinearly to the ViT's input, the objects'
 *       logits made disjoint pixel-wise, binarized for the memory encoder ({@link MemoryMasks#fromPrompt}).</li>
 * </ol>
 * So the frame's size matters for the first memory, as it does in Meta's session.
 */
final class NewObjects {
    private NewObjects() {}

    /** A new object's conditioning memory. */
    record Start(FeatureMap features, float[] pointer) {}

    static Start[] start(CpuThreadPool pool, TrackerPasses model, TrackerFrame f, List<Detection> dets, int width,
            int height) {
        Sam3TrackerConfig c = model.config();
        int low = c.lowResSize();
        int mask = c.maskSize();
        int k = dets.size();
        float[][] pointers = new float[k][];
        boolean[] present = new boolean[k];
        boolean[][] video = new boolean[k][];
        for (int j = 0; j < k; j++) {
            float[] up = MaskResize.bilinear(dets.get(j).maskLogits(), low, low, mask, mask);
            boolean[] bin = MaskOverlaps.binary(up);
            present[j] = MaskOverlaps.area(bin) > 0;
            pointers[j] = model.pointerFromMask(pool, f, bin);
            float[] asFloat = new float[bin.length];
            for (int i = 0; i < bin.length; i++) {
                asFloat[i] = bin[i] ? 1f : 0f;
            }
            float[] atVideo = MaskResize.antialiased(asFloat, mask, mask, height, width);
            video[j] = new boolean[atVideo.length];
            for (int i = 0; i < atVideo.length; i++) {
                video[j][i] = atVideo[i] > 0.5f;
            }
            for (int e = 0; e < j; e++) {
                for (int i = 0; i < atVideo.length; i++) {
                    if (video[j][i]) {
                        video[e][i] = false;
                    }
                }
            }
        }
        float[][] high = new float[k][];
        for (int j = 0; j < k; j++) {
            float[] logits = new float[video[j].length];
            for (int i = 0; i < logits.length; i++) {
                logits[i] = video[j][i] ? -Sam3TrackerModel.NO_OBJECT_SCORE : Sam3TrackerModel.NO_OBJECT_SCORE;
            }
            float[] atLow = MaskResize.antialiased(logits, height, width, low, low);
            high[j] = MaskResize.bilinear(atLow, low, low, c.inputSize(), c.inputSize());
        }
        high = MaskOverlaps.pixelwise(high);
        Start[] out = new Start[k];
        for (int j = 0; j < k; j++) {
            float[] scaled = MemoryMasks.fromPrompt(high[j], c.inputSize(), mask);
            out[j] = new Start(model.encodeMemory(pool, f, scaled, present[j]), pointers[j]);
        }
        return out;
    }
}
