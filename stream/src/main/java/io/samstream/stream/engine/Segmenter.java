package io.samstream.stream.engine;

import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecord.ObjectMask;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.connectors.video.DevicePicture;
import io.samstream.connectors.video.HostYuvPicture;
import io.samstream.gpu.SamModels;
import io.samstream.gpu.image.DeviceYuvImage;
import io.samstream.gpu.image.HostYuvImage;
import io.samstream.gpu.image.FrameImage;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.sam2.Sam2Tracking;
import io.samstream.gpu.sam3.video.Sam3VideoModel;
import io.samstream.gpu.sam3.video.Sam3VideoSettings;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.FixedPrompts;
import io.samstream.stream.track.FrameStep;
import io.samstream.stream.track.TrackedFrame;
import io.samstream.stream.track.Wave;
import java.util.ArrayList;
import java.util.List;

/**
 * The model work of the engine, free of Akka: a batch of frames to embeddings ({@link #embed}), one
 * frame's embedding and fixed prompts to its decoding step ({@link #fixed}, tracking off), or a tracker's
 * objects of a frame to its mask record ({@link #record}). Thread-safe when the backend is.
 */
public final class Segmenter {
    private final SamBackend backend;
    private final Sam2Tracking memoryModel;
    private final Sam3VideoModel conceptModel;
    private final Sam3VideoSettings conceptSettings;
    private final String modelName;

    public Segmenter(SamBackend backend, String modelName) {
        this(backend, null, null, null, modelName);
    }

    private Segmenter(SamBackend backend, Sam2Tracking memoryModel, Sam3VideoModel conceptModel,
            Sam3VideoSettings conceptSettings, String modelName) {
        this.backend = backend;
        this.memoryModel = memoryModel;
        this.conceptModel = conceptModel;
        this.conceptSettings = conceptSettings;
        this.modelName = modelName;
    }

    /**
     * SAM 2.1 in memory mode (on the CPU): no SAM backend; each stream's frames go through its own
     * {@link io.samstream.stream.track.memory.MemoryTracker} on this model, one frame at a time.
     */
    public static Segmenter memory(Sam2Tracking model, String modelName) {
        return new Segmenter(null, java.util.Objects.requireNonNull(model, "model"), null, null, modelName);
    }

    /**
     * SAM 3's concept tracking (on the CPU): no SAM backend; each stream's frames go through its own
     * {@link io.samstream.stream.track.concept.ConceptStreamTracker} on this model with these settings (the engine's
     * {@code samstream.tracking} keys override the cadence and the lost-object rules), one frame at a time.
     */
    public static Segmenter concepts(Sam3VideoModel model, Sam3VideoSettings settings, String modelName) {
        return new Segmenter(null, null, java.util.Objects.requireNonNull(model, "model"),
                java.util.Objects.requireNonNull(settings, "settings"), modelName);
    }

    /** SAM 3's video model of concept tracking; null for the other modes. */
    public Sam3VideoModel conceptModel() {
        return conceptModel;
    }

    /** Its settings (thresholds, object limit); null for the other modes. */
    public Sam3VideoSettings conceptSettings() {
        return conceptSettings;
    }

    public String modelName() {
        return modelName;
    }

    /** The SAM backend; null in memory mode ({@link #memoryModel}) and concept tracking ({@link #conceptModel}). */
    public SamBackend backend() {
        return backend;
    }

    /**
     * The GPU its model work runs on (a CUDA SAM backend's or SAM 2.1 tracker's ordinal), else
     * {@link SamModels.DeviceBackend#CPU}. SAM 3's concept model splits its parts between a GPU and the
     * CPU and counts as the CPU here.
     */
    public int gpu() {
        return memoryModel != null ? SamModels.gpuOf(memoryModel) : SamModels.gpuOf(backend);
    }

    /**
     * Whether its model reads frames where their decoder left them (NVDEC's device memory, a CPU decoder's YUV
     * planes): a SAM backend that does; SAM 2.1 memory mode takes each frame's RGB.
     */
    public boolean readsDeviceFrames() {
        return backend != null && backend.readsDeviceFrames();
    }

    /** The SAM 2.1 model of memory mode; null for SAM (kalman mode or fixed prompts). */
    public Sam2Tracking memoryModel() {
        return memoryModel;
    }

    /**
     * The embeddings of a batch of frames, one per frame, in order, where the backend keeps them (CUDA: a
     * device ring slot each; the caller closes each when its frame is decoded).
     */
    public List<ImageEmbedding> embed(List<VideoFrame> frames) {
        List<FrameImage> images = new ArrayList<>(frames.size());
        for (VideoFrame f : frames) {
            images.add(image(f));
        }
        // Resize / normalize / pad where the backend runs (on the GPU for CUDA), then encode.
        return backend.embedFrames(images);
    }

    /**
     * The encoder's view of a frame: its YUV planes (NVDEC's on the GPU, a CPU decoder's on the host) where the
     * backend reads them (the frame's RGB is then never made unless a sink asks), else the RGB bytes.
     */
    FrameImage image(VideoFrame f) {
        DevicePicture d = f.device();
        if (d != null && backend.readsDeviceFrames()) {
            return new DeviceYuvImage(f.width(), f.height(), d.luma(), d.lumaPitch(), d.chroma(), d.chromaPitch(),
                    d.sixteenBit(), d.matrix().kr, d.matrix().kb, d.fullRange(), d::rgb);
        }
        HostYuvPicture y = f.hostYuv();
        if (y != null && backend.readsDeviceFrames()) {
            return new HostYuvImage(f.width(), f.height(), y::copyPlanes, y.matrix().kr, y.matrix().kb, y.fullRange(),
                    y::rgb);
        }
        return new RgbImage(f.width(), f.height(), f.rgb());
    }

    /** The embeddings of a batch of frames as host tensors {@code [1, C, E, E]} (tools and tests). */
    public List<Tensor> encode(List<VideoFrame> frames) {
        List<Tensor> out = new ArrayList<>(frames.size());
        for (ImageEmbedding e : embed(frames)) {
            try (e) {
                out.add(e.toTensor());
            }
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
        return decode(frame, ImageEmbedding.of(embedding), prompts.resolve(frame.width(), frame.height()));
    }

    /** The mask record of one frame for these objects (already resolved for the frame's size). */
    public MaskRecord decode(VideoFrame frame, ImageEmbedding embedding, List<ObjectPrompt> objects) {
        TrackedFrame f = Wave.runOne(backend, fixed(frame, embedding, objects));
        return record(frame, f.objects(), f.hidden(), f.lost());
    }

    /**
     * One frame's fixed prompts (tracking off) as a {@link FrameStep} ({@link FixedPrompts#step}).
     *
     * @throws IllegalArgumentException when a prompt lies outside the frame (names the object)
     */
    public FrameStep fixed(VideoFrame frame, ImageEmbedding embedding, List<ObjectPrompt> objects) {
        return FixedPrompts.step(backend, frame.width(), frame.height(), embedding, objects);
    }

    /** The mask record of one frame: these objects, these hidden (coasting) ids, these lost ids. */
    public MaskRecord record(VideoFrame frame, List<ObjectMask> objects, List<Integer> hidden, List<Integer> lost) {
        return new MaskRecord(frame.streamId(), frame.index(), frame.ptsMillis(), frame.capturedAt(), frame.width(),
                frame.height(), modelName, objects, hidden, lost);
    }

}
