package io.samstream.bench;

import io.samstream.config.ModelPrecision;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.sam3.CudaSam3;
import io.samstream.gpu.cuda.sam3.CudaSam3Tracker;
import io.samstream.gpu.cuda.sam3.CudaSam3Vit;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3Backend;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Preprocessor;
import io.samstream.gpu.sam3.Sam3Shapes;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.VisionFeatures;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import io.samstream.gpu.sam3.video.Concept;
import io.samstream.gpu.sam3.video.Sam3ConceptDetector;
import io.samstream.gpu.sam3.video.Sam3VideoModel;
import io.samstream.gpu.sam3.video.Sam3VideoSettings;
import io.samstream.gpu.sam3.video.Sam3VideoTracker;
import io.samstream.gpu.sam3.video.TrackerPasses;
import io.samstream.gpu.sam3.video.VideoStep;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;

/**
 * SAM 3 concept tracking end to end through the public API, {@link Sam3VideoTracker#step} with an RGB frame (the call
 * the engine makes for every frame of a stream: pre-processing, the ViT and both necks, the detector on every frame,
 * the tracker's passes for every object, matching, memory, masks at the frame's size), at the release's shapes with
 * random weights: frames/s for {@code streams x phrases} scenarios over a generated clip ({@link #clip}: five shapes
 * moving over a gradient, 640 x 480 by default; bench/sam3_torch.py draws the same pixels).
 *
 * <p><b>The model.</b> {@code --config release}: {@link Sam3ConfigInference#RELEASE_VIT}, a text encoder of 1024 x 24
 * (16 heads, context 32), {@link Sam3ConfigInference#RELEASE_DETECTOR} and the release tracker (grid 72, width 256,
 * memory 64 x 7, 4 attention layers); {@code --config tiny} the unit tests' tiny shapes (input 112), for a smoke run
 * on the CPU. The weights are {@link Sam2Shapes#random} over {@link Sam3Shapes#shapes} and {@link
 * Sam3Shapes#trackerShapes}, tensor by tensor ({@link #random}). The text encoder's vocabulary is the tokenizer's ({@code --vocab}, by default the tests'
 * BPE vocabulary, 814 ids, shipped in the repository; the official one is not): the vocabulary's size only sizes the
 * embedding table a phrase's 32 ids are looked up in, so it does not change the speed. {@code --device cuda} opens
 * the model as {@code ModelCheckpoints.openSam3Video} does for a GPU (every image part on {@link CudaSam3}, the
 * tracker's passes on {@link CudaSam3Tracker}); {@code --device cpu} runs the fp32 CPU reference throughout.
 *
 * <p><b>About 5 instances a stream</b> ({@code --instances N}). Random weights score arbitrarily, so the thresholds
 * are chosen on the clip's first frame, per phrase, by one rule that bench/sam3_torch.py repeats on Meta's model:
 * frame 0's detection probabilities (the video detector's joint score with the presence token) sorted, the threshold
 * is the best probability below the k-th best, for the smallest k >= N that leaves N detections after Meta's mask
 * NMS (IoU 0.1); when no k does, NMS is turned off and k = N (random masks overlap: on the tiny configuration no
 * threshold leaves 5 after NMS). Each phrase is detected at its own threshold (the model's {@link
 * Sam3ConceptDetector} per phrase), the new-object threshold is the lowest of a stream's phrases', and a stream holds
 * at most N objects per phrase ({@code maxObjects} = N x phrases; Meta: {@code max_num_objects} = N a session, one
 * phrase a session). The tracker's object-score head is
 * shifted to +10 ({@code tracker.sam_mask_decoder.pred_obj_score_head.layers.2.bias}, as the SAM 3 video fixture
 * shifts it) so that every tracked object is judged present and really propagated, as a trained model's objects in
 * view are, not present or absent by the toss of a random head. {@code --heuristics off} (the default) runs Meta's
 * variant without temporal disambiguation ({@link Sam3VideoSettings#withoutTemporalDisambiguation}: no hot-start,
 * re-conditioning or memory selection; Meta's {@code apply_temporal_disambiguation=False}) on both sides: with random
 * masks every two objects overlap, and the hot-start rules remove them as duplicates (tiny, CPU: 1.9 tracks a frame
 * with them, 5.0 without); {@code on} keeps {@link Sam3VideoSettings#defaults}. Detection runs on every frame either
 * way. The TSV's {@code objects_per_frame} (objects shown), {@code tracks_per_frame} and {@code detections_per_frame}
 * (per phrase, after threshold and NMS) show what the timed frames carried.
 *
 * <p><b>Timing.</b> A scenario opens {@code streams} streams on the one model, each asking for {@code phrases}
 * phrases; frame t of every stream is stepped before frame t + 1, the streams side by side in {@code --lanes} lanes
 * (4, as the engine steps a micro-batch's streams: {@code ConceptStage.SIDE_BY_SIDE}; stream i in lane i mod 4, a
 * lane's streams one after another; the GPU parts serialize their own passes). {@code --batch N} steps N frames of
 * every stream as one of the engine's micro-batches (default 1: frame by frame, a live camera the engine keeps up
 * with; 8, the engine's {@code max-batch}: a file, or a camera's backlog): where the batch is one stream's, its next
 * frame is encoded ahead while the current one steps ({@link Sam3VideoTracker#encode}), as the engine does.
 * {@code --warmup} frames a stream first (16 by default: the memory bank and the 16 object pointers full), then
 * {@code --repeats} windows of {@code --frames} frames a stream, wall time each; the TSV gives the median window's
 * total frames/s (and each window's), and ms per frame of a stream = streams x 1000 / total frames/s. Each step
 * includes SAM 3's pre-processing of the 640 x 480 frame (on the device with {@code --device cuda}, else on the
 * CPU); Meta's session pre-processes its whole video when it starts, outside its timing. {@code preprocess_ms} is
 * the CPU reference's pre-processing of one frame (median): what a frame costs on the CPU path. After each scenario
 * a {@code #windows} row per window says what it did: its first frame, frames/s, ids no step of its streams had shown
 * before, detections a frame a stream, its slowest frame (ms; with {@code --batch} N the mean frame of its slowest
 * batch), to tell why one window is slower than another.
 *
 * <p><b>Memory.</b> {@code device_memory_mb}: the GPU's memory in use (cuMemGetInfo: every process) at the end of
 * the timed windows, and {@code device_memory_growth_mb} since the end of the warm-up; {@code
 * object_memory_mb_per_object}: the values of the object memories the streams hold (in the GPU bank or on the
 * host), at 4 bytes each, per object tracked. {@code --long-frames N} adds one stream with one phrase stepped N
 * frames, a {@code #long} row every 10 %: tracked objects, device memory, object memory and ms per frame (18,000
 * frames = 10 minutes of a 30 frames/s camera).
 *
 * <p>{@code --precision fp8} runs the trunk's block Linears on the e4m3 tensor cores ({@code
 * samstream.model.precision = fp8}, {@link CudaSam3Vit}; compute capability 9.0), bf16 by default; the
 * {@code #samstream} row says which.
 *
 * <p><b>Profile.</b> {@code --profile N} adds, after the scenarios, one stream of one phrase whose N steps are timed
 * part by part ({@link Sam3StepProfile}): {@code #profile} rows, where the time of a step goes. It runs on a model of
 * its own, opened after the scenarios', whose steps run the detection after the propagation rather than beside it
 * (so the parts add up to a longer step than the scenarios' 1 x 1).
 *
 * <pre>java -Xmx48g -cp ... io.samstream.bench.Sam3VideoBench OUT.tsv [--config release|tiny] [--device cuda|cpu]
 *      [--scenarios 1x1,4x1,16x1] [--frames 10] [--warmup 16] [--repeats 3]
 *      [--instances 5] [--heuristics off|on] [--size 640x480] [--threads N] [--lanes 4] [--batch 1] [--seed 7]
 *      [--long-frames 0] [--profile 0] [--precision bf16|fp8]
 *      [--vocab gpu/src/test/resources/fixtures/sam3/tokenizer/test_bpe_vocab.txt.gz]</pre>
 * A smoke run on a CPU: {@code --config tiny --device cpu --scenarios 1x1,2x2 --frames 4 --repeats 2}.
 * On the GPU machine tools/device/run-sam3-video-bench.sh runs it after Meta's {@code Sam3VideoPredictor}
 * (bench/sam3_torch.py) in one device call.
 */
public final class Sam3VideoBench {
    /** The phrases a stream asks for, in order; a scenario with P phrases takes the first P. */
    static final List<String> PHRASES = List.of("red circle", "blue square", "green triangle", "yellow disc");
    /** The tracker's object-score bias that makes every tracked object present (see the class comment). */
    static final String OBJECT_SCORE_BIAS = "tracker.sam_mask_decoder.pred_obj_score_head.layers.2.bias";
    static final float PRESENT_LOGIT = 10f;

    private Sam3VideoBench() {}

    public static void main(String[] args) throws IOException {
        if (args.length < 1 || args[0].startsWith("--")) {
            System.err.println("usage: Sam3VideoBench OUT.tsv [--config release|tiny] [--device cuda|cpu] "
                    + "[--scenarios 1x1,4x1,16x1] [--frames 10] [--warmup 16] "
                    + "[--repeats 3] [--instances 5] [--heuristics off|on] [--size 640x480] [--threads N] [--lanes 4] "
                    + "[--batch 1] [--seed 7] [--long-frames 0] [--profile 0] [--precision bf16|fp8] [--vocab FILE]");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        String configName = "release", device = "cuda";
        List<String> scenarios = List.of("1x1", "4x1", "16x1");
        int frames = 10, warmup = 16, repeats = 3, instances = 5, width = 640, height = 480, longFrames = 0, lanes = 4;
        int batch = 1;
        int profileFrames = 0;
        int threads = Runtime.getRuntime().availableProcessors();
        long seed = 7;
        boolean heuristics = false;
        ModelPrecision precision = ModelPrecision.BF16;
        Path vocab = Path.of("gpu/src/test/resources/fixtures/sam3/tokenizer/test_bpe_vocab.txt.gz");
        for (int i = 1; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("option " + args[i] + " needs a value");
            }
            String v = args[i + 1];
            switch (args[i]) {
                case "--config" -> configName = v;
                case "--device" -> device = v;
                case "--scenarios" -> scenarios = List.of(v.split(","));
                case "--frames" -> frames = Integer.parseInt(v);
                case "--warmup" -> warmup = Integer.parseInt(v);
                case "--repeats" -> repeats = Integer.parseInt(v);
                case "--instances" -> instances = Integer.parseInt(v);
                case "--size" -> {
                    String[] wh = v.split("x");
                    width = Integer.parseInt(wh[0]);
                    height = Integer.parseInt(wh[1]);
                }
                case "--threads" -> threads = Integer.parseInt(v);
                case "--batch" -> {
                    batch = Integer.parseInt(v);
                    if (batch < 1) {
                        throw new IllegalArgumentException("--batch " + v + ": at least 1");
                    }
                }
                case "--lanes" -> {
                    lanes = Integer.parseInt(v);
                    if (lanes < 1) {
                        throw new IllegalArgumentException("--lanes " + v + ": at least 1");
                    }
                }
                case "--seed" -> seed = Long.parseLong(v);
                case "--long-frames" -> longFrames = Integer.parseInt(v);
                case "--profile" -> profileFrames = Integer.parseInt(v);
                case "--heuristics" -> heuristics = switch (v) {
                    case "on" -> true;
                    case "off" -> false;
                    default -> throw new IllegalArgumentException("--heuristics " + v + ": on or off");
                };
                case "--vocab" -> vocab = Path.of(v);
                case "--precision" -> precision = ModelPrecision.parse(v, "--precision");
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (profileFrames < 0) {
            throw new IllegalArgumentException("--profile " + profileFrames + ": 0 (none) or more steps");
        }
        if (frames < 1 || warmup < 1 || repeats < 1 || instances < 1) {
            throw new IllegalArgumentException("--frames, --warmup, --repeats and --instances must be at least 1");
        }
        int maxPhrases = 0;
        for (String sc : scenarios) {
            maxPhrases = Math.max(maxPhrases, scenario(sc)[1]);
        }
        if (maxPhrases > PHRASES.size()) {
            throw new IllegalArgumentException("at most " + PHRASES.size() + " phrases a stream");
        }

        Sam3Tokenizer tokenizer = Sam3Tokenizer.load(vocab);
        Sam3Config config = config(configName, tokenizer.vocabularySize());
        Sam3TrackerConfig tracker = trackerConfig(configName);
        long t0 = System.nanoTime();
        Map<String, int[]> shapes = new LinkedHashMap<>(Sam3Shapes.shapes(config));
        shapes.putAll(Sam3Shapes.trackerShapes(config, tracker));
        StateDict sd = random(shapes, seed);
        sd.get(OBJECT_SCORE_BIAS, 1).data()[0] = PRESENT_LOGIT;
        System.out.printf(Locale.ROOT, "random weights: %d tensors in %.1f s%n", shapes.size(),
                (System.nanoTime() - t0) / 1e9);

        RgbImage[] clip = clip(width, height, warmup + repeats * frames + 1);
        List<String> rows = new ArrayList<>();
        rows.add("impl\tconfig\tdevice\tstreams\tphrases\tframes_timed\tms_per_frame_per_stream\tframes_per_s_total\t"
                + "frames_per_s_total_all\tobjects_per_frame\ttracks_per_frame\tdetections_per_frame\t"
                + "device_memory_mb\tdevice_memory_growth_mb\tobject_memory_mb_per_object\tpreprocess_ms\tsettings");
        t0 = System.nanoTime();
        try (Sam3VideoModel model = open(sd, tokenizer, threads, device, precision, null);
             CudaContext gpu = device.equals("cuda") ? CudaContext.open(0) : null) {
            String where = model.describe() + (gpu == null ? "" : "; trunk " + precision + "; " + gpu.info().describe());
            rows.add("#samstream\t" + configName + "\t" + where + "\tmodel opened in "
                    + String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - t0) / 1e9) + ", " + threads
                    + " CPU threads, clip " + width + "x" + height);
            System.out.println(rows.get(rows.size() - 1));
            Map<Concept, Calibration> calibrations = calibrations(model, tokenizer, clip[0], maxPhrases, instances,
                    rows);
            double preprocess = preprocessMs(clip[0], config.vision().imageSize());
            for (String sc : scenarios) {
                int[] sp = scenario(sc);
                List<Concept> concepts = new ArrayList<>(calibrations.keySet()).subList(0, sp[1]);
                List<String> windows = new ArrayList<>();
                rows.add(measure(model, tokenizer, gpu, heuristics, calibrations, concepts, instances, clip, sp[0],
                        lanes, batch, frames, warmup, repeats, configName + "\t" + device,
                        preprocess, windows));
                System.out.println(rows.get(rows.size() - 1));
                rows.addAll(windows);
                windows.forEach(System.out::println);
                Files.write(out, rows);
            }
            if (longFrames > 0) {
                List<Concept> concepts = List.of(Concept.of(PHRASES.get(0)));
                rows.addAll(longRun(new PhraseDetector(model, tokenizer, calibrations), concepts,
                        settings(heuristics, calibrations, concepts, instances), model, gpu, clip, longFrames));
            }
        }
        if (profileFrames > 0) {
            // a model of its own: timing each part alone needs its detection after the propagation (Overlap)
            try (Sam3StepProfile profile = new Sam3StepProfile(device.equals("cuda") ? 0 : -1);
                 Sam3VideoModel model = open(sd, tokenizer, threads, device, precision, profile)) {
                Map<Concept, Calibration> calibrations = calibrations(model, tokenizer, clip[0], 1, instances,
                        new ArrayList<>());
                List<Concept> concepts = List.of(Concept.of(PHRASES.get(0)));
                rows.addAll(profile(model, tokenizer, calibrations, concepts, settings(heuristics, calibrations,
                        concepts, instances), profile, clip, warmup, profileFrames));
            }
        }
        Files.write(out, rows);
        System.out.println(String.join("\n", rows));
    }

    /** The first {@code phrases} phrases' thresholds on the clip's first frame ({@link #calibrate}), as rows too. */
    private static Map<Concept, Calibration> calibrations(Sam3VideoModel model, Sam3Tokenizer tokenizer,
            RgbImage first, int phrases, int instances, List<String> rows) {
        VisionFeatures vision = model.detector().encodeImage(first);
        Map<Concept, Calibration> calibrations = new LinkedHashMap<>();
        try {
            for (String phrase : PHRASES.subList(0, phrases)) {
                Concept concept = Concept.of(phrase);
                calibrations.put(concept, Calibration.calibrate(model.detector(), tokenizer, vision, concept, instances));
                rows.add("#calibration\t" + phrase + "\t" + calibrations.get(concept));
                System.out.println(rows.get(rows.size() - 1));
            }
        } finally {
            vision.release();
        }
        return calibrations;
    }

    /**
     * {@link Sam2Shapes#random} tensor by tensor in parallel, each seeded from {@code seed} and its name (the same
     * weights for the same seed): the release's 0.8 G values in seconds instead of a minute on one thread.
     */
    static StateDict random(Map<String, int[]> shapes, long seed) {
        List<String> names = new ArrayList<>(shapes.keySet());
        Tensor[] tensors = new Tensor[names.size()];
        IntStream.range(0, names.size()).parallel().forEach(i -> {
            String name = names.get(i);
            tensors[i] = Sam2Shapes.random(Map.of(name, shapes.get(name)), seed * 31 + name.hashCode()).get(name);
        });
        Map<String, Tensor> map = new LinkedHashMap<>();
        for (int i = 0; i < tensors.length; i++) {
            map.put(names.get(i), tensors[i]);
        }
        return new StateDict(null, map);
    }

    /** "SxP": streams and phrases a stream. */
    private static int[] scenario(String sc) {
        String[] p = sc.trim().split("x");
        if (p.length != 2) {
            throw new IllegalArgumentException("scenario " + sc + ": streams x phrases, e.g. 4x1");
        }
        int[] v = {Integer.parseInt(p[0]), Integer.parseInt(p[1])};
        if (v[0] < 1 || v[1] < 1) {
            throw new IllegalArgumentException("scenario " + sc + ": at least one stream and one phrase");
        }
        return v;
    }

    /** The detector's shapes of {@code name}, its text encoder embedding {@code vocab} ids. */
    static Sam3Config config(String name, int vocab) {
        return switch (name) {
            case "release" -> new Sam3Config(Sam3ConfigInference.RELEASE_VIT,
                    new Sam3Config.Text(vocab, 32, 1024, 24, 16, 4096, 512), Sam3ConfigInference.RELEASE_DETECTOR);
            // Sam3Weights.TINY of the gpu module's tests (input 112, ViT 48 x 4, detector 32 wide, 20 queries)
            case "tiny" -> new Sam3Config(new Sam3Config.Vision(112, 14, 48, 4, 2, 222, 4, new int[] {1, 3}, 4, 4),
                    new Sam3Config.Text(vocab, 32, 64, 2, 1, 256, 512),
                    new Sam3Config.Detector(32, 4, 2, 64, 2, 64, 20, 1, 64, 7, 3, 64));
            default -> throw new IllegalArgumentException("--config " + name + ": release or tiny");
        };
    }

    /** The tracker of {@code name}: Meta's build_tracker (release), or the tests' Sam3Weights.TINY_TRACKER. */
    static Sam3TrackerConfig trackerConfig(String name) {
        return name.equals("release")
                ? new Sam3TrackerConfig(1008, 72, 256, 64, 7, 4, 2048, 2048, 256, 4, 3, 2, 7, 16)
                : new Sam3TrackerConfig(112, 8, 32, 8, 7, 2, 64, 2048, 256, 4, 3, 2, 7, 16);
    }

    /**
     * The video model on {@code device}, as ModelCheckpoints.openSam3Video opens it there; with {@code profile}, its
     * parts timed, so the detection runs after the propagation, not beside it (each part drains the device alone):
     * the profile's model is not the scenarios'.
     */
    private static Sam3VideoModel open(StateDict sd, Sam3Tokenizer tokenizer, int threads, String device,
            ModelPrecision precision, Sam3StepProfile profile) {
        return switch (device) {
            case "cpu" -> profile == null ? new Sam3VideoModel(sd, tokenizer, threads)
                    : new Sam3VideoModel(sd, tokenizer, threads, profile.wrap(Sam3Backend.cpu()),
                            profile.wrap(TrackerPasses.Factory.cpu()), false);
            case "cuda" -> profile == null
                    ? new Sam3VideoModel(sd, tokenizer, threads, CudaSam3.factory(0, precision),
                            CudaSam3Tracker.factory(0))
                    : new Sam3VideoModel(sd, tokenizer, threads, profile.wrap(CudaSam3.factory(0, precision)),
                            profile.wrap(CudaSam3Tracker.factory(0)), false);
            default -> throw new IllegalArgumentException("--device " + device + ": cuda or cpu");
        };
    }

    /**
     * Meta's settings ({@code heuristics}: its default; else its variant without them) for {@code concepts}: detection
     * and new-object thresholds the lowest of the phrases' (each phrase's own is applied by its {@link
     * PhraseDetector}; the stream's only has to let those detections through), at most {@code instances} objects a
     * phrase.
     */
    static Sam3VideoSettings settings(boolean heuristics, Map<Concept, Calibration> calibrations,
            List<Concept> concepts, int instances) {
        Sam3VideoSettings d = heuristics ? Sam3VideoSettings.defaults()
                : Sam3VideoSettings.withoutTemporalDisambiguation();
        float threshold = 1f, nms = Calibration.META_NMS_IOU;
        for (Concept c : concepts) {
            threshold = Math.min(threshold, calibrations.get(c).threshold());
            nms = Math.min(nms, calibrations.get(c).nmsIou());
        }
        return new Sam3VideoSettings(d.everyFrames(), threshold, nms, d.assocIou(), d.trackAssocIou(), threshold,
                d.hotstartDelay(), d.hotstartUnmatched(), d.hotstartDuplicates(), d.occlusionIou(), d.fillHoleArea(),
                d.reconditionEvery(), d.memorySelection(), d.memorySelectionThreshold(), d.pointerWindow(),
                instances * concepts.size(), d.lostAfter(), d.forgetAfter());
    }

    /** One scenario: {@code streams} streams asking for {@code concepts}; the TSV row (see the class comment). */
    private static String measure(Sam3VideoModel model, Sam3Tokenizer tokenizer, CudaContext gpu, boolean heuristics,
            Map<Concept, Calibration> calibrations, List<Concept> concepts, int instances, RgbImage[] clip,
            int streams, int lanes, int batch, int frames, int warmup, int repeats, String label, double preprocess,
            List<String> windows) {
        Sam3VideoSettings settings = settings(heuristics, calibrations, concepts, instances);
        List<Sam3VideoTracker> st = new ArrayList<>();
        List<PhraseDetector> detectors = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
            PhraseDetector d = new PhraseDetector(model, tokenizer, calibrations);
            detectors.add(d);
            st.add(model.openStream(settings, d));
        }
        ExecutorService side = Executors.newFixedThreadPool(Math.max(1, Math.min(streams, lanes) - 1));
        ExecutorService ahead = Executors.newCachedThreadPool();
        int f = 0;
        // the ids each stream has shown (for the windows' new ids)
        List<java.util.Set<Long>> seen = new ArrayList<>();
        for (int k = 0; k < st.size(); k++) {
            seen.add(new java.util.HashSet<>());
        }
        while (f < warmup) {
            int n = Math.min(batch, warmup - f);
            for (VideoStep[] done : stepAll(st, group(clip, f, n), concepts, lanes, side, ahead)) {
                for (int k = 0; k < st.size(); k++) {
                    for (var o : done[k].objects()) {
                        seen.get(k).add(o.id());
                    }
                }
            }
            f += n;
        }
        long memoryWarm = gpu == null ? 0 : gpu.deviceMemoryUsed();
        long calls0 = detectors.stream().mapToLong(d -> d.calls).sum();
        long dets0 = detectors.stream().mapToLong(d -> d.detections).sum();
        double[] fps = new double[repeats];
        long shown = 0, tracked = 0, steps = 0;
        // what each window did, to tell why one is slower than another: ids not seen before, detections, the
        // slowest frame
        windows.add("#windows\tstreams\twindow\tfirst_frame\tframes_per_s_total\tnew_ids\tdetections_per_frame"
                + "\tslowest_frame_ms");
        for (int r = 0; r < repeats; r++) {
            long t0 = System.nanoTime();
            long windowDets = detectors.stream().mapToLong(d -> d.detections).sum();
            long newIds = 0, slowest = 0;
            int first = f;
            for (int i = 0; i < frames; ) {
                int n = Math.min(batch, frames - i);
                long s0 = System.nanoTime();
                VideoStep[][] group = stepAll(st, group(clip, f, n), concepts, lanes, side, ahead);
                slowest = Math.max(slowest, (System.nanoTime() - s0) / n); // a batch's frames: their mean
                for (VideoStep[] done : group) {
                    for (int k = 0; k < st.size(); k++) {
                        shown += done[k].objects().size();
                        tracked += st.get(k).objectCount(); // at the batch's end
                        steps++;
                        for (var o : done[k].objects()) {
                            newIds += seen.get(k).add(o.id()) ? 1 : 0;
                        }
                    }
                }
                i += n;
                f += n;
            }
            fps[r] = (double) streams * frames / ((System.nanoTime() - t0) / 1e9);
            windowDets = detectors.stream().mapToLong(d -> d.detections).sum() - windowDets;
            windows.add(String.format(Locale.ROOT, "#windows\t%d\t%d\t%d\t%.2f\t%d\t%.2f\t%.1f", streams, r, first,
                    fps[r], newIds, (double) windowDets / ((long) streams * frames), slowest / 1e6));
        }
        side.shutdownNow();
        ahead.shutdownNow();
        long memoryEnd = gpu == null ? 0 : gpu.deviceMemoryUsed();
        long held = st.stream().mapToLong(Sam3VideoTracker::heldFloats).sum();
        int objects = st.stream().mapToInt(Sam3VideoTracker::objectCount).sum();
        long calls = detectors.stream().mapToLong(d -> d.calls).sum() - calls0;
        long dets = detectors.stream().mapToLong(d -> d.detections).sum() - dets0;
        st.forEach(Sam3VideoTracker::close);
        double[] sorted = fps.clone();
        Arrays.sort(sorted);
        double median = sorted[sorted.length / 2];
        StringBuilder all = new StringBuilder();
        for (double v : fps) {
            all.append(all.length() == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.2f", v));
        }
        return String.format(Locale.ROOT,
                "samstream\t%s\t%d\t%d\t%d\t%.1f\t%.2f\t%s\t%.2f\t%.2f\t%.2f\t%s\t%s\t%.2f\t%.1f\t%s", label, streams,
                concepts.size(), repeats * frames, 1000.0 * streams / median, median, all, (double) shown / steps,
                (double) tracked / steps, calls == 0 ? 0 : (double) dets / calls,
                gpu == null ? "-" : String.format(Locale.ROOT, "%.0f", memoryEnd / 1e6),
                gpu == null ? "-" : String.format(Locale.ROOT, "%.0f", (memoryEnd - memoryWarm) / 1e6),
                objects == 0 ? 0 : held * 4 / 1e6 / objects, preprocess,
                "batches of " + batch + " frames a stream, " + settingsText(settings, calibrations, concepts));
    }

    /** Frames {@code first .. first + n - 1} of the clip (cycled). */
    private static RgbImage[] group(RgbImage[] clip, int first, int n) {
        RgbImage[] g = new RgbImage[n];
        for (int i = 0; i < n; i++) {
            g[i] = clip[(first + i) % clip.length];
        }
        return g;
    }

    /**
     * A micro-batch of {@code group.length} frames of every stream, as the engine's {@code ConceptStage} steps one:
     * {@code lanes} lanes (stream i in lane i mod lanes; lane 0 on this thread, the others on {@code side}), a lane's
     * steps frame by frame, its streams in order. With one lane, where its next step is the same stream's (one
     * stream, a batch of several frames), that frame is encoded ahead on {@code ahead} while this one steps. The
     * steps come back by frame, then stream.
     */
    private static VideoStep[][] stepAll(List<Sam3VideoTracker> streams, RgbImage[] group, List<Concept> concepts,
            int lanes, ExecutorService side, ExecutorService ahead) {
        VideoStep[][] steps = new VideoStep[group.length][streams.size()];
        int n = Math.min(lanes, streams.size());
        List<Future<?>> others = new ArrayList<>();
        for (int lane = 1; lane < n; lane++) {
            int l = lane;
            others.add(side.submit(() -> stepLane(streams, l, n, group, concepts, steps, ahead)));
        }
        stepLane(streams, 0, n, group, concepts, steps, ahead);
        for (Future<?> o : others) {
            get(o);
        }
        return steps;
    }

    private static void stepLane(List<Sam3VideoTracker> streams, int lane, int lanes, RgbImage[] group,
            List<Concept> concepts, VideoStep[][] steps, ExecutorService ahead) {
        List<int[]> order = new ArrayList<>(); // {frame, stream}
        for (int j = 0; j < group.length; j++) {
            for (int i = lane; i < streams.size(); i += lanes) {
                order.add(new int[] {j, i});
            }
        }
        Future<Sam3VideoTracker.Encoded> next = null;
        for (int k = 0; k < order.size(); k++) {
            int j = order.get(k)[0], i = order.get(k)[1];
            Sam3VideoTracker stream = streams.get(i);
            Future<Sam3VideoTracker.Encoded> mine = next;
            next = null;
            if (lanes == 1 && k + 1 < order.size() && order.get(k + 1)[1] == i) {
                RgbImage following = group[order.get(k + 1)[0]];
                next = ahead.submit(() -> stream.encode(following));
            }
            steps[j][i] = mine == null ? stream.step(group[j], concepts) : stream.step(get(mine), concepts);
        }
    }

    private static <T> T get(Future<T> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("a stream's step failed", e.getCause());
        }
    }

    private static String settingsText(Sam3VideoSettings s, Map<Concept, Calibration> calibrations,
            List<Concept> concepts) {
        StringBuilder b = new StringBuilder();
        for (Concept c : concepts) {
            Calibration k = calibrations.get(c);
            b.append(b.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%s > %.6f nms %.2f", c,
                    k.threshold(), k.nmsIou()));
        }
        return String.format(Locale.ROOT, "heuristics %s, %s, max objects %d, object score +%.0f",
                s.hotstartDelay() > 0 ? "on" : "off", b, s.maxObjects(), PRESENT_LOGIT);
    }

    /** One stream, {@code concepts}, {@code frames} frames: a row every 10 % (see the class comment). */
    private static List<String> longRun(PhraseDetector detector, List<Concept> concepts, Sam3VideoSettings settings,
            Sam3VideoModel model, CudaContext gpu, RgbImage[] clip, int frames) {
        List<String> rows = new ArrayList<>();
        rows.add("#long\tframe\ttracks\tdevice_memory_mb\tobject_memory_mb\tms_per_frame_since_last");
        try (Sam3VideoTracker st = model.openStream(settings, detector)) {
            int every = Math.max(1, frames / 10);
            long last = System.nanoTime();
            for (int f = 1; f <= frames; f++) {
                st.step(clip[(f - 1) % clip.length], concepts);
                if (f % every == 0 || f == 1) {
                    long now = System.nanoTime();
                    rows.add(String.format(Locale.ROOT, "#long\t%d\t%d\t%s\t%.2f\t%.1f", f, st.objectCount(),
                            gpu == null ? "-" : String.format(Locale.ROOT, "%.1f", gpu.deviceMemoryUsed() / 1e6),
                            st.heldFloats() * 4 / 1e6, (now - last) / 1e6 / (f == 1 ? 1 : every)));
                    System.out.println(rows.get(rows.size() - 1));
                    last = System.nanoTime();
                }
            }
        }
        return rows;
    }

    /**
     * {@code --profile N}: one stream, {@code warmup} frames, then {@code frames} frames each drained before and after
     * ({@link Sam3StepProfile}): each part's ms per step, the step's, the detection's (the concept detector: its parts
     * and its CPU scoring), and alone, three times (median), the tracker's features of a frame: the tracker neck's
     * levels read back to the host and the CPU's conv_s0 / conv_s1 on them.
     */
    private static List<String> profile(Sam3VideoModel model, Sam3Tokenizer tokenizer,
            Map<Concept, Calibration> calibrations, List<Concept> concepts, Sam3VideoSettings settings,
            Sam3StepProfile profile, RgbImage[] clip, int warmup, int frames) {
        PhraseDetector detector = new PhraseDetector(model, tokenizer, calibrations);
        try (Sam3VideoTracker st = model.openStream(settings, detector)) {
            int f = 0;
            for (; f < warmup; f++) {
                st.step(clip[f % clip.length], concepts);
            }
            profile.start();
            detector.profile = profile;
            for (int i = 0; i < frames; i++, f++) {
                profile.drain();
                long t0 = System.nanoTime();
                st.step(clip[f % clip.length], concepts);
                profile.drain();
                profile.add("step", System.nanoTime() - t0);
            }
            detector.profile = null;
            List<String> rows = profile.rows(frames);
            long[] levels = new long[3], convs = new long[3];
            for (int i = 0; i < 3; i++) {
                VisionFeatures v = model.detector().encodeImage(clip[i]);
                profile.drain();
                long t0 = System.nanoTime();
                FeatureMap[] maps = model.detector().trackerLevels(v);
                float[][] l = FeatureMap.values(maps);
                for (FeatureMap m : maps) {
                    m.release();
                }
                long t1 = System.nanoTime();
                model.tracker().features(model.detector().pool(), l);
                convs[i] = System.nanoTime() - t1;
                levels[i] = t1 - t0;
                v.release();
            }
            Arrays.sort(levels);
            Arrays.sort(convs);
            rows.add(String.format(Locale.ROOT, "#profile-alone\ttracker levels to host (neck + read back)\t%.2f",
                    levels[1] / 1e6));
            rows.add(String.format(Locale.ROOT, "#profile-alone\ttracker features on the CPU (conv_s0, conv_s1)\t%.2f",
                    convs[1] / 1e6));
            rows.forEach(System.out::println);
            return rows;
        }
    }

    /** SAM 3's pre-processing of one frame (resize to the model's square, normalize), median of 5, ms. */
    private static double preprocessMs(RgbImage frame, int size) {
        double[] ms = new double[5];
        for (int i = 0; i < ms.length; i++) {
            long t0 = System.nanoTime();
            Sam3Preprocessor.modelInput(frame, size);
            ms[i] = (System.nanoTime() - t0) / 1e6;
        }
        Arrays.sort(ms);
        return ms[ms.length / 2];
    }

    /**
     * {@code n} frames of the benchmark's clip, bench/sam3_torch.py's {@code clip} pixel for pixel (integer formulas
     * only): a gradient, and five shapes (discs and squares in five colours) moving on straight lines, each
     * {@code width / 320} pixels a frame across and {@code height / 480} down or up.
     */
    static RgbImage[] clip(int width, int height, int n) {
        int[][] colours = {{220, 40, 40}, {40, 60, 220}, {40, 190, 70}, {230, 200, 40}, {200, 60, 200}};
        int side = Math.min(width, height);
        RgbImage[] out = new RgbImage[n];
        for (int t = 0; t < n; t++) {
            byte[] rgb = new byte[3 * width * height];
            for (int y = 0; y < height; y++) {
                for (int x = 0; x < width; x++) {
                    int o = 3 * (y * width + x);
                    rgb[o] = (byte) (60 + x * 80 / width);
                    rgb[o + 1] = (byte) (70 + y * 60 / height);
                    rgb[o + 2] = (byte) (90 + (x + y) * 50 / (width + height));
                }
            }
            for (int i = 0; i < 5; i++) {
                int r = side * (8 + i) / 100;
                int cx = width * (15 + 17 * i) / 100 + (i % 2 == 0 ? 1 : -1) * (width * t / 320);
                int cy = height * (25 + 12 * i) / 100 + (i % 3 - 1) * (height * t / 480);
                for (int y = Math.max(0, cy - r); y <= Math.min(height - 1, cy + r); y++) {
                    for (int x = Math.max(0, cx - r); x <= Math.min(width - 1, cx + r); x++) {
                        if (i % 2 != 0 || (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r) {
                            int o = 3 * (y * width + x);
                            rgb[o] = (byte) colours[i][0];
                            rgb[o + 1] = (byte) colours[i][1];
                            rgb[o + 2] = (byte) colours[i][2];
                        }
                    }
                }
            }
            out[t] = new RgbImage(width, height, rgb);
        }
        return out;
    }
}
