package io.samstream.gpu;

import io.samstream.config.Device;
import io.samstream.config.ModelPrecision;
import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaAvailability;
import io.samstream.gpu.cuda.sam2.CudaSam2Offload;
import io.samstream.gpu.cuda.sam2.CudaSam2Tracker;
import io.samstream.gpu.cuda.sam3.CudaSam3;
import io.samstream.gpu.cuda.sam3.CudaSam3Tracker;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2ConfigInference;
import io.samstream.gpu.sam2.Sam2Layouts;
import io.samstream.gpu.sam2.Sam2Model;
import io.samstream.gpu.sam2.Sam2Tracking;
import io.samstream.gpu.sam3.Sam3Checkpoint;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Model;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import io.samstream.gpu.sam3.video.Sam3VideoModel;
import io.samstream.gpu.sam3.video.TrackerPasses;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which model a checkpoint holds, SAM, SAM 2.1 or SAM 3, told from its state_dict's keys, and the SAM 2.1 opener.
 *
 * <p>SAM 3 ({@code sam3.pt}, or its image model's state_dict) is told by its ViT under the vision-language backbone
 * ({@link Sam3Checkpoint#isSam3}); it is checked first, as its tracker has SAM 2-like parts under other names.
 * <p>A state_dict with any of SAM 2's own key families (a Hiera trunk {@code image_encoder.trunk.*}, a
 * {@code memory_attention.*} or a {@code memory_encoder.*}) is taken as SAM 2.1, so that a damaged SAM 2.1
 * file is reported by {@link Sam2ConfigInference} with what it lacks, instead of as a strange SAM. Anything
 * else goes to SAM, whose inference names what is wrong.
 *
 * <p>The shapes of Meta's four releases tell the whole configuration. Any other SAM 2 checkpoint (a small
 * trained or random-weight model) needs the few values shapes do not tell in a JSON file next to it,
 * {@code <checkpoint>.layout.json}:
 * <pre>
 *   {"name": "tiny", "heads": 1, "global_att_blocks": [2], "window_spec": [8, 4, 6, 2],
 *    "image_size": 128, "mem_attn_heads": 2}
 * </pre>
 * When that file exists it is used even for a release's shapes.
 */
public final class ModelCheckpoints {
    private static final Logger log = LoggerFactory.getLogger(ModelCheckpoints.class);

    /** The suffix of the layout file next to a SAM 2 checkpoint whose shapes are not a release's. */
    public static final String LAYOUT_SUFFIX = ".layout.json";

    private ModelCheckpoints() {}

    /** The model family of a checkpoint. */
    public enum Family {
        SAM("SAM"), SAM2("SAM 2.1"), SAM3("SAM 3");

        private final String label;

        Family(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** SAM 3 when its ViT trunk is there; else SAM 2.1 when any of SAM 2's own key families is present; else SAM. */
    public static Family family(StateDict sd) {
        if (Sam3Checkpoint.isSam3(sd)) {
            return Family.SAM3;
        }
        return sd.hasPrefix("image_encoder.trunk.") || sd.hasPrefix("memory_attention.")
                || sd.hasPrefix("memory_encoder.") ? Family.SAM2 : Family.SAM;
    }

    /** Loads the checkpoint's state_dict (every failure a {@link CheckpointException} naming the file). */
    public static StateDict load(Path checkpoint) {
        return CheckpointLoader.load(checkpoint);
    }

    /** The layout file of a checkpoint: {@code <file name>.layout.json} in the same directory. */
    public static Path layoutFile(Path checkpoint) {
        return checkpoint.resolveSibling(checkpoint.getFileName() + LAYOUT_SUFFIX);
    }

    /** The configuration of a SAM 2.1 state_dict: from a release's shapes, or with the layout file's values. */
    public static Sam2Config sam2Config(StateDict sd) {
        Sam2Config.Layout layout = null;
        if (sd.source() != null) {
            Path file = layoutFile(sd.source());
            if (Files.isRegularFile(file)) {
                layout = readLayout(file);
                log.info("{}: SAM 2 layout from {}: {}", sd.source(), file.getFileName(), layout);
                return Sam2ConfigInference.infer(sd, layout, file);
            }
        }
        return Sam2ConfigInference.infer(sd, null);
    }

    /** Opens a SAM 2.1 state_dict on the CPU (fp32 reference) with {@code threads} threads. */
    public static Sam2Model openSam2(StateDict sd, int threads) {
        Sam2Config config = sam2Config(sd);
        try {
            Sam2Model model = new Sam2Model(sd, config, threads);
            log.info("model: {} from {}", config, sd.source());
            return model;
        } catch (IllegalArgumentException e) {
            throw new CheckpointException(sd.source(), "does not fit " + config + ": " + e.getMessage(), e);
        }
    }

    /**
     * Opens a SAM 2.1 state_dict for {@code device}: {@code cpu} as above; {@code cuda} with its image encoder, memory
     * attention and memory encoder on GPU {@code gpu} ({@link CudaSam2Offload}; the mask decoder stays on the CPU: what
     * {@code segment} runs on single images), failing with the reason when CUDA cannot be used; {@code auto} on the GPU
     * when one is usable and the parts start there, else on the CPU, the reason logged.
     */
    public static Sam2Model openSam2(StateDict sd, int threads, Device device, int gpu) {
        Sam2Config config = sam2Config(sd);
        return onGpu(device, gpu, "SAM 2.1's parts", () -> {
            CudaSam2Offload offload = CudaSam2Offload.open(sd, config, gpu);
            try {
                Sam2Model model = new Sam2Model(sd, config, threads, offload);
                log.info("model: {} from {}, {}", config, sd.source(), model.describe());
                return model;
            } catch (IllegalArgumentException e) {
                throw new CheckpointException(sd.source(), "does not fit " + config + ": " + e.getMessage(), e);
            }
        }, () -> openSam2(sd, threads));
    }

    /**
     * Opens a SAM 3 image model for {@code device}: {@code cuda} with its ViT trunk, necks, fusion encoder, decoder and
     * mask head on GPU {@code gpu} ({@link CudaSam3}, one context; the text encoder, geometry encoder and scoring stay
     * on the CPU reference), failing with the reason when CUDA cannot be used; {@code auto} there when it can, else on
     * the CPU; {@code cpu} all on the CPU. The trunk's block Linears in {@code precision} on the GPU
     * ({@code samstream.model.precision}; the CPU is the fp32 reference). The one place the SAM 3 image path picks its
     * parts' device.
     */
    public static Sam3Model openSam3(StateDict sd, int threads, Device device, int gpu, ModelPrecision precision) {
        return onGpu(device, gpu, SAM3_GPU_PARTS, () -> new Sam3Model(sd, Sam3ConfigInference.infer(sd), threads,
                CudaSam3.factory(gpu, precision)), () -> new Sam3Model(sd, threads));
    }

    /** What SAM 3 puts on the GPU, for the log lines. */
    private static final String SAM3_GPU_PARTS = "SAM 3's ViT trunk, necks, fusion encoder, decoder and mask head";

    /** Objects the GPU tracker of the engine's memory mode steps in one pass, and tracks in all. */
    public static final int ENGINE_OBJECTS_PER_PASS = 16, ENGINE_OBJECTS = 256;

    /**
     * Opens a SAM 2.1 state_dict for tracking streams (the engine's memory mode) on {@code device}: {@code cuda} the
     * whole video step on GPU {@code gpu} ({@link CudaSam2Tracker}: up to {@code framesPerPass} frames of different
     * streams a pass, {@link #ENGINE_OBJECTS_PER_PASS} objects a pass, {@link #ENGINE_OBJECTS} in all), failing with
     * the reason when it cannot start; {@code auto} there when it can, else on the CPU; {@code cpu} the CPU reference.
     */
    public static Sam2Tracking openSam2Tracking(StateDict sd, int threads, Device device, int gpu, int framesPerPass) {
        Sam2Config config = sam2Config(sd);
        CudaSam2Tracker.Limits limits = new CudaSam2Tracker.Limits(Math.max(1, framesPerPass),
                ENGINE_OBJECTS_PER_PASS, ENGINE_OBJECTS);
        return onGpu(device, gpu, "the SAM 2.1 tracker", () -> {
            Sam2Tracking tracker = CudaSam2Tracker.open(sd, config, gpu, limits);
            log.info("model: {} from {}, {}", config, sd.source(), tracker.describe());
            return tracker;
        }, () -> openSam2(sd, threads));
    }

    /**
     * {@code onGpu} for {@code cuda} (its failure, or no usable GPU, an error naming why), {@code onCpu} for {@code cpu};
     * for {@code auto} the first that works, the reason logged when it is the CPU.
     */
    private static <T> T onGpu(Device device, int gpu, String what, Supplier<T> onGpu, Supplier<T> onCpu) {
        if (device == Device.CPU) {
            return onCpu.get();
        }
        CudaAvailability a = CudaAvailability.probe();
        if (!a.available()) {
            if (device == Device.CUDA) {
                throw new IllegalStateException("device cuda: " + a.reason() + " (use --device cpu or auto)");
            }
            log.info("device auto: {} on the CPU because {}", what, a.reason());
            return onCpu.get();
        }
        try {
            return onGpu.get();
        } catch (CheckpointException e) {
            throw e;
        } catch (RuntimeException e) {
            if (device == Device.CUDA) {
                throw new IllegalStateException("device cuda: " + what + " did not start on GPU " + gpu + ": "
                        + e.getMessage(), e);
            }
            log.warn("device auto: a GPU is usable ({}) but {} did not start there: {}; running on the CPU",
                    a.reason(), what, e.getMessage());
            return onCpu.get();
        }
    }

    /**
     * Opens a SAM 3 state_dict ({@code sam3.pt}: the detector and the tracker) for tracking concepts on streams, its
     * tokenizer's vocabulary read from next to {@code checkpoint}: the detector's parts on GPU {@code gpu} as {@link
     * #openSam3} puts them for {@code device}, and with {@code cuda} there too the tracker's memory attention, mask
     * decoder and memory encoder ({@link CudaSam3Tracker}; both or neither); the rest on the CPU (fp32 reference)
     * with {@code threads} threads, the trunk's block Linears in {@code precision} on the GPU. An image-only model (no
     * tracker) is refused naming what is missing.
     */
    public static Sam3VideoModel openSam3Video(StateDict sd, Path checkpoint, int threads, Device device, int gpu,
                                               ModelPrecision precision) {
        if (!Sam3Checkpoint.hasTracker(sd)) {
            Sam3Checkpoint.tracker(sd); // throws, naming what is missing
        }
        Sam3Tokenizer tokenizer = Sam3Tokenizer.forCheckpoint(checkpoint);
        Sam3VideoModel model = onGpu(device, gpu, SAM3_GPU_PARTS + " and its tracker",
                () -> new Sam3VideoModel(sd, tokenizer, threads, CudaSam3.factory(gpu, precision),
                        CudaSam3Tracker.factory(gpu)),
                () -> new Sam3VideoModel(sd, tokenizer, threads));
        log.info("model: SAM 3 video, {} from {}, {}", model, checkpoint, model.describe());
        return model;
    }

    /** Loads and opens a SAM 2.1 checkpoint; a SAM checkpoint is refused, naming the file. */
    public static Sam2Model openSam2(Path checkpoint, int threads) {
        return openSam2(load(checkpoint), threads);
    }

    /** A layout file's values, read and checked on their own ({@link Sam2Layouts#read}). */
    static Sam2Config.Layout readLayout(Path file) {
        return Sam2Layouts.read(file);
    }
}
