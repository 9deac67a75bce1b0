package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.Mlp;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.sam2.PositionEncodings;
import java.util.List;

/**
 * SAM 3's image model in fp32 on the CPU (Meta's {@code Sam3Image} at inference): weights from a state_dict
 * ({@code sam3.pt} or an image model's) and the forward passes, one part per file: {@link Vit} and {@link DualNeck}
 * (image), {@link TextEncoder}, {@link GeometryEncoder} (exemplar boxes), {@link FusionEncoder}, {@link DetrDecoder},
 * {@link DotProductScoring} and {@link MaskHead}. The ViT, its necks, the fusion encoder, the decoder and the mask
 * head, the heavy parts, run through a {@link Sam3Backend} (the CPU reference by default, or a GPU's). The image and the phrase are encoded once
 * each and combined per prompt, as Meta's processor caches them.
 */
public final class Sam3Model implements AutoCloseable {
    private final Sam3Config config;
    /** The heavy parts (trunk, necks, fusion encoder, decoder, mask head): the CPU reference unless another backend. */
    private final Sam3Backend backend;
    private final TextEncoder text;
    private final GeometryEncoder geometry;
    private final DotProductScoring scoring;
    /** The queries' mask embeddings (a 3-layer MLP), whose dot products with the pixels are the mask logits. */
    private final Mlp maskEmbed;
    /** The sine position encoding of the 1x level (the same for every image). */
    private final float[] pos;
    private final CpuThreadPool pool;
    private final int threads;

    /** The model of a checkpoint, its configuration read from the shapes. */
    public Sam3Model(StateDict checkpoint, int threads) {
        this(checkpoint, Sam3ConfigInference.infer(checkpoint), threads);
    }

    public Sam3Model(StateDict checkpoint, Sam3Config config, int threads) {
        this(checkpoint, config, threads, Sam3Backend.cpu());
    }

    /**
     * With the heavy parts {@code backend} makes (e.g. on the GPU, {@link Sam3Backend}); the rest on the CPU.
     * When a part fails to load, the backend and the thread pool are closed again.
     */
    public Sam3Model(StateDict checkpoint, Sam3Config config, int threads, Sam3Backend.Factory backend) {
        StateDict sd = Sam3Checkpoint.detector(checkpoint);
        this.config = config;
        Sam3Config.Detector c = config.detector();
        this.pool = new CpuThreadPool(threads);
        this.threads = threads;
        Sam3Backend opened = null;
        try {
            opened = backend.open(sd, config, pool);
            this.text = new TextEncoder(sd, config.text(), c.dModel());
            this.geometry = new GeometryEncoder(sd, c);
            this.scoring = new DotProductScoring(sd, c);
            this.maskEmbed = Mlp.load(sd, MaskHead.MASK_EMBED, c.dModel(), c.dModel(), c.dModel(), 3);
        } catch (RuntimeException e) {
            try {
                if (opened != null) {
                    opened.close();
                }
            } finally {
                pool.close();
            }
            throw e;
        }
        this.backend = opened;
        int g = config.vision().grid();
        this.pos = PositionEncodings.sine2d(g, g, c.dModel());
    }

    public Sam3Config config() {
        return config;
    }

    /** Where the model runs: "CPU (fp32, N threads)", or the backend's parts' device and the rest on the CPU. */
    public String describe() {
        String cpu = "CPU (fp32, " + threads + " threads)";
        String b = backend.describe();
        return b == null ? cpu : b + ", the rest on the " + cpu;
    }

    /** The image features of a model input: [3, size, size] channel-first (Meta's tensor), normalized. */
    public VisionFeatures encodeImage(float[] chw) {
        int s = config.vision().imageSize();
        if (chw.length != 3 * s * s) {
            throw new IllegalArgumentException("model input of " + chw.length + " values; " + s + " x " + s
                    + " x 3 expected");
        }
        FeatureMap trunk = backend.trunk().forward(chw);
        return new VisionFeatures(config.vision().grid(), trunk, backend.neck().forward(trunk), pos);
    }

    /** The image features of an 8-bit image of any size, pre-processed as {@link Sam3Preprocessor} does. */
    public VisionFeatures encodeImage(RgbImage image) {
        FeatureMap trunk = backend.trunk().forward(image, config.vision().imageSize());
        return new VisionFeatures(config.vision().grid(), trunk, backend.neck().forward(trunk), pos);
    }

    /** Whether the checkpoint has the tracker's neck (a video model's {@code sam3.pt} has; an image model's not). */
    public boolean hasTrackerNeck() {
        return backend.trackerNeck() != null;
    }

    /**
     * The tracker's image features of a frame: the second neck ({@code sam2_convs}) on the ViT's map, levels at 4x,
     * 2x and 1x the grid, channels-last [(4g)², d], [(2g)², d], [g², d] ({@code sam2_backbone_out}'s backbone_fpn),
     * as the backend hands them on (a GPU backend's stay on its device until read; the caller releases them).
     */
    public FeatureMap[] trackerLevels(VisionFeatures image) {
        Sam3Neck trackerNeck = backend.trackerNeck();
        if (trackerNeck == null) {
            throw new IllegalStateException("this SAM 3 checkpoint has no tracker neck (" + Sam3Neck.TRACKER
                    + "*): it is an image model's, not the video model's sam3.pt");
        }
        return trackerNeck.forward(image.trunk());
    }

    /** The pool the model's passes run on (the tracker shares it). */
    public CpuThreadPool pool() {
        return pool;
    }

    /** The features of a phrase's token ids (as many as the text context, 32 for SAM 3). */
    public TextFeatures encodeText(int[] tokens) {
        return text.encode(pool, tokens);
    }

    /** Scores, boxes and presence of every query for an image, a phrase and exemplar boxes (may be empty). */
    public Detections detect(VisionFeatures image, TextFeatures phrase, List<ExemplarBox> boxes) {
        int d = config.detector().dModel();
        int g = image.grid();
        float[] geo = geometry.encode(pool, boxes, image);
        Prompt prompt = Prompt.concat(phrase, geo, boxes.size() + 1, d);
        FeatureMap memory = backend.fusion().forward(image.tokens(), image.pos(), g * g, prompt);
        image.keep(memory);
        Sam3Decoder.Output out = backend.decoder().forward(memory, image.pos(), g, prompt);
        float[] logits = scoring.score(pool, out.queries(), config.detector().queries(), prompt);
        return new Detections(logits, out.boxes(), out.presence(), out.queries(), memory, image, prompt);
    }

    /** Mask logits [which.length, (4 grid)²] of the given queries, at 4x the ViT's grid (288 a side at 1008). */
    public float[] masks(Detections detections, int[] which) {
        int d = config.detector().dModel();
        float[] selected = new float[which.length * d];
        for (int i = 0; i < which.length; i++) {
            System.arraycopy(detections.queries(), which[i] * d, selected, i * d, d);
        }
        if (which.length == 0) {
            return new float[0];
        }
        float[] embeddings = maskEmbed.forward(pool, selected, which.length);
        return backend.maskHead().masks(detections.memory(), detections.image(), detections.prompt(), embeddings,
                which.length);
    }

    @Override
    public void close() {
        try {
            backend.close();
        } finally {
            pool.close();
        }
    }
}
