package io.samstream.stream.engine;

import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.kafka.MaskRecord.ObjectMask;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.FrameGeometry;
import io.samstream.stream.track.LowResMask;
import io.samstream.stream.track.MaskReadout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The model work of the engine, free of Akka: a batch of frames to embeddings ({@link #encode}), one
 * frame's embedding and fixed prompts to its mask record ({@link #decode}, tracking off), or a tracker's
 * objects of a frame to it ({@link #record}). Thread-safe when the backend is.
 */
public final class Segmenter {
    private final SamBackend backend;
    private final String modelName;
    private final MaskReadout readout;

    public Segmenter(SamBackend backend, String modelName) {
        this.backend = backend;
        this.modelName = modelName;
        this.readout = new MaskReadout(backend);
    }

    public String modelName() {
        return modelName;
    }

    public SamBackend backend() {
        return backend;
    }

    /** The embeddings of a batch of frames, one {@code [1, C, E, E]} tensor per frame, in order. */
    public List<Tensor> encode(List<VideoFrame> frames) {
        List<RgbImage> images = new ArrayList<>(frames.size());
        for (VideoFrame f : frames) {
            images.add(new RgbImage(f.width(), f.height(), f.rgb()));
        }
        // Resize / normalize / pad where the backend runs (on the GPU for CUDA), then encode.
        Tensor embeddings = backend.encodeFrames(images);
        int per = embeddings.size() / frames.size();
        int[] shape = embeddings.shape();
        List<Tensor> out = new ArrayList<>(frames.size());
        for (int i = 0; i < frames.size(); i++) {
            out.add(new Tensor(Arrays.copyOfRange(embeddings.data(), i * per, (i + 1) * per), 1, shape[1], shape[2],
                    shape[3]));
        }
        return out;
    }

    /**
     * The mask record of one frame: every object of {@code prompts} decoded against the frame's
     * embedding, upscaled to the frame, thresholded at 0 and run-length encoded.
     *
     * @throws IllegalArgumentException when a prompt lies outside the frame (names the object)
     */
    public MaskRecord decode(VideoFrame frame, Tensor embedding, PromptSpec prompts) {
        return decode(frame, embedding, prompts.resolve(frame.width(), frame.height()));
    }

    /** The mask record of one frame for these objects (already resolved for the frame's size). */
    public MaskRecord decode(VideoFrame frame, Tensor embedding, List<ObjectPrompt> objects) {
        FrameGeometry g = new FrameGeometry(frame.width(), frame.height(), backend.config().imageSize(),
                backend.config().lowResSize());
        // Lone points (multimask) and the rest (single mask) each go to the decoder in one batch.
        List<MaskReadout.Item> items = new ArrayList<>(Collections.nCopies(objects.size(), (MaskReadout.Item) null));
        for (boolean multimask : new boolean[] {false, true}) {
            List<Integer> which = new ArrayList<>();
            List<Prompt> prompts = new ArrayList<>();
            for (int i = 0; i < objects.size(); i++) {
                if (FrameGeometry.wantsMultimask(objects.get(i)) == multimask) {
                    which.add(i);
                    prompts.add(g.modelPrompt(objects.get(i)));
                }
            }
            if (prompts.isEmpty()) {
                continue;
            }
            List<DecoderOutput> outs = backend.decodeBatch(embedding, prompts, multimask);
            for (int k = 0; k < which.size(); k++) {
                DecoderOutput out = outs.get(k);
                // The best of SAM's masks by predicted IoU (the only one without multimask output).
                int best = 0;
                float[] iou = out.iouPredictions();
                for (int i = 1; i < iou.length; i++) {
                    if (iou[i] > iou[best]) {
                        best = i;
                    }
                }
                ObjectPrompt o = objects.get(which.get(k));
                items.set(which.get(k), new MaskReadout.Item(o.id(), LowResMask.select(out.lowResLogits(), best),
                        iou[best]));
            }
        }
        // Every object's mask post-processed in one call (one GPU launch under CUDA).
        List<ObjectMask> masks = new ArrayList<>(objects.size());
        for (MaskReadout.Readout r : readout.readAll(items, g)) {
            masks.add(r.object());
        }
        return record(frame, masks, List.of());
    }

    /** The mask record of one frame: these objects, these lost ids. */
    public MaskRecord record(VideoFrame frame, List<ObjectMask> objects, List<Integer> lost) {
        return new MaskRecord(frame.streamId(), frame.index(), frame.ptsMillis(), frame.capturedAt(), frame.width(),
                frame.height(), modelName, objects, lost);
    }

}
