package io.samstream.bench.track;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigUtil;
import io.samstream.config.ConfigLoader;
import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.config.SamstreamConfig;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.mask.CocoRle;
import io.samstream.stream.app.SamstreamRuntime;
import io.samstream.stream.engine.Engine;
import io.samstream.stream.engine.FrameSink;
import io.samstream.stream.engine.PromptMessage;
import io.samstream.stream.engine.PromptRejected;
import io.samstream.stream.engine.StreamHandle;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Runs clips through the whole engine, as {@code samstream run} builds it ({@link SamstreamRuntime} from a
 * validated configuration), with the clips as frame sources and an in-memory sink in place of Kafka.
 * Clips run one after the other, one stream each.
 *
 * <p>Three modes:
 * <ul>
 *   <li>{@link Mode#BOX}: each object is prompted with a box once, on the first frame where it is fully
 *       visible (for most objects frame 0): the tight box of its ground-truth mask there, id = its index in
 *       the clip. Objects fully visible on frame 0 are the stream's configured prompts; the others are added
 *       through the engine's run-time prompt API ({@link Engine#applyPrompt}, op add, {@code frame} = that
 *       frame), sent by the source just before it hands out that frame, so they apply exactly from it. An
 *       object never fully visible gets no prompt and no J/F. An object that comes back after it had left the
 *       frame for a while ({@link Exits#reprompts}) is prompted again (update, its box on its first fully
 *       visible frame after the return): a lost object stays gone by the record contract, as a user would
 *       give it again. Without tracking the engine decodes every
 *       prompt as given on every later frame (the baseline); with tracking it follows the objects.</li>
 *   <li>{@link Mode#ORACLE}: like box mode, then on every later frame each object's prompt is replaced by its
 *       ground-truth box of that frame (update; remove while it is not seen, add when it is back), through the
 *       same run-time API. Not tracking: the ceiling that box-prompted tracking can reach with this model and
 *       engine. Run it with tracking off.</li>
 *   <li>{@link Mode#DISCOVERY}: no prompts; the engine's automatic discovery ({@code samstream.discovery})
 *       must find the objects.</li>
 * </ul>
 */
public final class TrackHarness implements AutoCloseable {
    /** How objects are given to the engine. */
    public enum Mode {
        BOX, ORACLE, DISCOVERY;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One clip's run.
     *
     * @param predictions  per frame: mask by object id (row-major)
     * @param promptFrames object -> the frame its first box prompt was given on (empty in discovery mode)
     * @param reprompts    object -> the later frames it was prompted again on in box mode, after it came back
     *                     into the frame ({@link Exits#reprompts}); empty for the other modes
     * @param lost         per frame: the ids its record lists as {@code lost}
     * @param zeroArea     per frame: the ids its record publishes with area 0 (an empty mask)
     * @param seconds      from adding the stream to its end (every record published)
     */
    public record ClipRun(Clip clip, Mode mode, List<Map<Integer, boolean[]>> predictions,
            Map<Integer, Integer> promptFrames, Map<Integer, List<Integer>> reprompts, List<List<Integer>> lost,
            List<java.util.Set<Integer>> zeroArea, double seconds) {
        /** A run known only by its masks (no re-prompts, no lost, no zero-area entries). */
        public ClipRun(Clip clip, Mode mode, List<Map<Integer, boolean[]>> predictions, Map<Integer, Integer> promptFrames,
                double seconds) {
            this(clip, mode, predictions, promptFrames, Map.of(), emptyPerFrame(predictions.size()),
                    emptyPerFrame(predictions.size()).stream().map(l -> java.util.Set.<Integer>of()).toList(), seconds);
        }

        public double framesPerSecond() {
            return clip.frames() / seconds;
        }

        /** Object -> every frame it was prompted on (the first prompt, then the re-prompts). */
        public Map<Integer, List<Integer>> allPromptFrames() {
            Map<Integer, List<Integer>> out = new TreeMap<>();
            promptFrames.forEach((o, f) -> {
                List<Integer> l = new ArrayList<>();
                l.add(f);
                l.addAll(reprompts.getOrDefault(o, List.of()));
                out.put(o, List.copyOf(l));
            });
            return out;
        }

        private static List<List<Integer>> emptyPerFrame(int frames) {
            List<List<Integer>> out = new ArrayList<>();
            for (int t = 0; t < frames; t++) {
                out.add(List.of());
            }
            return out;
        }
    }

    private final Map<String, ClipSource> sources = new ConcurrentHashMap<>();
    private final Map<String, List<MaskRecord>> records = new ConcurrentHashMap<>();
    private final SamstreamRuntime runtime;

    /**
     * The engine's configuration: the defaults of reference.conf, the harness's settings (model, device, no
     * Kafka, no HTTP server), then {@code extraHocon} on top (e.g. {@code samstream.tracking.enabled = on}).
     * Validated like any configuration: an unknown key is an error naming it.
     *
     * @param threads CPU threads (0: all cores)
     */
    public static SamstreamConfig config(Path checkpoint, String device, int threads, String extraHocon) {
        String base = "samstream {\n"
                + "  model.checkpoint = " + ConfigUtil.quoteString(checkpoint.toString()) + "\n"
                + "  device = " + ConfigUtil.quoteString(device) + "\n"
                + "  cpu.threads = " + threads + "\n"
                + "  sinks.kafka = off\n"
                + "  http.enabled = off\n"
                + "}\n";
        Config merged = ConfigFactory.parseString(extraHocon == null ? "" : extraHocon)
                .withFallback(ConfigFactory.parseString(base))
                .withFallback(ConfigFactory.defaultReference())
                .resolve();
        return ConfigLoader.validate(merged, "track-eval engine config");
    }

    /** Whether {@code extraHocon} on top of reference.conf turns {@code samstream.tracking.enabled} on. */
    public static boolean trackingOn(String extraHocon) {
        Config c = ConfigFactory.parseString(extraHocon == null ? "" : extraHocon)
                .withFallback(ConfigFactory.defaultReference()).resolve();
        return c.hasPath("samstream.tracking.enabled") && c.getBoolean("samstream.tracking.enabled");
    }

    /** Whether this build's reference.conf knows {@code path} (e.g. "samstream.tracking"). */
    public static boolean knows(String path) {
        return ConfigFactory.defaultReference().hasPathOrNull(path);
    }

    public TrackHarness(SamstreamConfig config) throws IOException {
        FrameSink sink = new FrameSink() {
            @Override
            public CompletionStage<Void> accept(MaskRecord record, VideoFrame frame) {
                records.computeIfAbsent(record.stream(), s -> java.util.Collections.synchronizedList(new ArrayList<>()))
                        .add(record);
                return CompletableFuture.completedFuture(null);
            }
        };
        this.runtime = SamstreamRuntime.start(config, spec -> {
            ClipSource s = sources.remove(spec.id());
            if (s == null) {
                throw new IOException(spec.id() + ": no clip prepared for this stream");
            }
            return s;
        }, c -> Optional.of(sink));
    }

    /** What the model runs on (for the report). */
    public String backendName() {
        return runtime.backendName();
    }

    public String modelName() {
        return runtime.modelName();
    }

    /** Runs one clip to its end and collects its masks. */
    public ClipRun run(Clip clip, Mode mode) throws Exception {
        ClipTruth truth = clip.truth();
        Map<Integer, List<Integer>> reprompts = mode == Mode.BOX ? Exits.reprompts(truth) : Map.of();
        Map<Integer, List<Integer>> repromptsGiven = new TreeMap<>();
        String id = clip.name() + "-" + mode.label();
        Engine engine = runtime.engine();
        Map<Integer, Integer> promptFrames = new TreeMap<>();
        List<ObjectPrompt> configured = new ArrayList<>();
        // Changes at run time, by frame: add / update (with a prompt) or remove (prompt null, id only).
        Map<Integer, List<Change>> later = new HashMap<>();
        if (mode != Mode.DISCOVERY) {
            for (int o = 0; o < truth.objects(); o++) {
                int first = truth.firstFullyVisible(o);
                if (first < 0) {
                    continue;
                }
                promptFrames.put(o, first);
                ObjectPrompt p = new ObjectPrompt(o, null, truth.box(o, first));
                if (first == 0) {
                    configured.add(p);
                } else {
                    later.computeIfAbsent(first, k -> new ArrayList<>()).add(new Change(PromptMessage.Op.ADD, o, p));
                }
                for (int again : reprompts.getOrDefault(o, List.of())) {
                    if (again > first) {
                        // The object is in the stream's prompts (a lost one stays there): update re-seeds it.
                        later.computeIfAbsent(again, k -> new ArrayList<>()).add(new Change(PromptMessage.Op.UPDATE, o,
                                new ObjectPrompt(o, null, truth.box(o, again))));
                        repromptsGiven.computeIfAbsent(o, k -> new ArrayList<>()).add(again);
                    }
                }
                boolean present = true;
                for (int t = first + 1; mode == Mode.ORACLE && t < truth.frames(); t++) {
                    double[] box = truth.box(o, t);
                    PromptMessage.Op op = box == null ? (present ? PromptMessage.Op.REMOVE : null)
                            : present ? PromptMessage.Op.UPDATE : PromptMessage.Op.ADD;
                    if (op != null) {
                        later.computeIfAbsent(t, k -> new ArrayList<>()).add(new Change(op, o,
                                box == null ? null : new ObjectPrompt(o, null, box)));
                    }
                    present = box != null;
                }
            }
        }
        sources.put(id, new ClipSource(clip, id, t -> {
            for (Change c : later.getOrDefault(t, List.of())) {
                try {
                    long from = engine.applyPrompt(new PromptMessage(id, c.op(), c.object(), c.prompt(),
                            OptionalLong.of(t)));
                    if (from != t) {
                        throw new IOException(id + ": the " + c.op().wireName() + " of object " + c.object()
                                + " for frame " + t + " applies from frame " + from);
                    }
                } catch (PromptRejected e) {
                    throw new IOException(id + ": the " + c.op().wireName() + " of object " + c.object() + " for frame "
                            + t + " was rejected: " + e.getMessage(), e);
                }
            }
        }));
        records.remove(id);
        long t0 = System.nanoTime();
        StreamHandle h = engine.add(new StreamSpec(id, "synthetic:" + clip.name(), StreamSpec.Live.FALSE,
                StreamSpec.Decoder.AUTO, new PromptSpec(configured, 0)));
        StreamHandle.Result r = h.result().toCompletableFuture().get(30, TimeUnit.MINUTES);
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (r.state() != StreamHandle.State.ENDED) {
            throw new IllegalStateException("clip " + id + ": the stream " + r.state().name().toLowerCase(Locale.ROOT)
                    + r.error().map(e -> ": " + e.getMessage()).orElse(""));
        }
        List<MaskRecord> got = records.remove(id);
        List<List<Integer>> lost = new ArrayList<>();
        List<java.util.Set<Integer>> zeroArea = new ArrayList<>();
        for (int t = 0; t < clip.frames(); t++) {
            lost.add(List.of());
            zeroArea.add(java.util.Set.of());
        }
        for (MaskRecord rec : got == null ? List.<MaskRecord>of() : got) {
            int t = (int) rec.frame();
            if (t >= 0 && t < clip.frames()) {
                lost.set(t, List.copyOf(rec.lost()));
                zeroArea.set(t, rec.objects().stream().filter(m -> m.area() == 0).map(MaskRecord.ObjectMask::id)
                        .collect(java.util.stream.Collectors.toUnmodifiableSet()));
            }
        }
        return new ClipRun(clip, mode, predictions(id, clip, got), promptFrames, repromptsGiven, lost, zeroArea,
                seconds);
    }

    /** One prompt change sent at run time. */
    private record Change(PromptMessage.Op op, int object, ObjectPrompt prompt) {}

    /** The stream's records as masks per frame; every frame must have exactly one record. */
    private static List<Map<Integer, boolean[]>> predictions(String id, Clip clip, List<MaskRecord> got) {
        List<Map<Integer, boolean[]>> out = new ArrayList<>();
        for (int t = 0; t < clip.frames(); t++) {
            out.add(null);
        }
        for (MaskRecord rec : got == null ? List.<MaskRecord>of() : got) {
            int t = (int) rec.frame();
            if (t < 0 || t >= clip.frames() || out.get(t) != null) {
                throw new IllegalStateException(id + ": unexpected record for frame " + rec.frame());
            }
            Map<Integer, boolean[]> masks = new HashMap<>();
            for (MaskRecord.ObjectMask m : rec.objects()) {
                if (m.mask().height() != clip.height() || m.mask().width() != clip.width()) {
                    throw new IllegalStateException(id + " frame " + t + ": object " + m.id() + " has a "
                            + m.mask().width() + "x" + m.mask().height() + " mask");
                }
                if (masks.put(m.id(), CocoRle.decode(m.mask().counts(), clip.height(), clip.width())) != null) {
                    throw new IllegalStateException(id + " frame " + t + ": object " + m.id() + " twice");
                }
            }
            out.set(t, masks);
        }
        for (int t = 0; t < out.size(); t++) {
            if (out.get(t) == null) {
                throw new IllegalStateException(id + ": no record for frame " + t);
            }
        }
        return out;
    }

    @Override
    public void close() {
        runtime.close();
    }
}
