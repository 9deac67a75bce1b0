package io.samstream.bench;

import io.samstream.bench.track.Clip;
import io.samstream.bench.track.ClipScore;
import io.samstream.bench.track.FrameDump;
import io.samstream.bench.track.HardClips;
import io.samstream.bench.track.HardReport;
import io.samstream.bench.track.SceneClip;
import io.samstream.bench.track.ResultsTsv;
import io.samstream.bench.track.TrackClips;
import io.samstream.bench.track.TrackHarness;
import io.samstream.bench.track.TrackHealth;
import io.samstream.bench.track.TrackHarness.Mode;
import io.samstream.bench.track.TrackReport;
import io.samstream.config.SamstreamConfig;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The tracking benchmark: the synthetic clips of {@link TrackClips} through the whole engine, scored
 * against their ground truth (J, F, J&F, id switches, discovery recall, false tracks; see
 * {@link ClipScore}), in three modes ({@link TrackHarness}): box prompts given once per object; the
 * reference with every frame's ground-truth box (what the model and engine reach without tracking's
 * errors); automatic discovery without prompts.
 *
 * <pre>java -cp ... io.samstream.bench.TrackEval [--model CKPT] [--device cpu|cuda|auto] [--threads N]
 *      [--families default|hard|FAMILY,...] [--clips NAME,...] [--modes box,oracle,discovery] [--frames N]
 *      [--engine-config HOCON] [--box-config HOCON] [--oracle-config HOCON] [--discovery-config HOCON]
 *      [--commit ID] [--out FILE.md] [--dump DIR]</pre>
 *
 * The engine's settings are HOCON on top of reference.conf, validated as {@code samstream run} validates its
 * file. Each mode has a default ({@link #defaultConfig}): box mode turns {@code samstream.tracking} on (and
 * discovery off), the reference turns both off, discovery mode turns {@code samstream.discovery} (and
 * tracking) on, each only where this build's reference.conf has that section. Without tracking, box mode
 * is the pre-tracking baseline (the engine decodes each box prompt as given on every later frame); without
 * discovery, discovery mode is skipped and the report says so. {@code --box-config} /
 * {@code --oracle-config} / {@code --discovery-config} replace a mode's default; {@code --engine-config} is
 * added to every mode (after its default). With {@code --out X.md} the figures also go to {@code X.tsv}, for
 * {@link TrackCompare} (CPU against CUDA).
 *
 * <p>{@code --families} picks clips by family: {@code default} (the four clips of {@link TrackClips}, what runs
 * without the argument), {@code hard} (every family of {@link HardClips}: shake-contact, same-colour,
 * long-occlusion, leave-return, scene-cut) or family names, comma-separated (either kind). {@code --clips} picks
 * clips by name from either set. The default clips' tables are as they always were; the harder families get
 * their own tables ({@link HardReport}): per clip and per family, with false-track frames, lost delays and
 * zero-area entries in box mode. {@code --dump DIR} writes each clip's records against its truth, frame by
 * frame ({@link FrameDump}), to {@code DIR/CLIP-MODE.tsv}.
 */
public final class TrackEval {
    private static final String MODEL = "examples/sam-demo-synthetic.pth";

    private TrackEval() {}

    public static void main(String[] args) throws Exception {
        Path model = null;
        String device = "auto";
        int threads = 0;
        List<String> clipNames = null;
        List<String> families = null;
        List<Mode> modes = List.of(Mode.BOX, Mode.ORACLE, Mode.DISCOVERY);
        int frames = 0;
        String extra = "";
        Map<Mode, String> modeConfig = new LinkedHashMap<>();
        String commit = null;
        Path out = null;
        Path dump = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value (see the class doc for the arguments)");
            }
            String v = args[++i];
            switch (a) {
                case "--model" -> model = Path.of(v);
                case "--device" -> device = v;
                case "--threads" -> threads = Integer.parseInt(v);
                case "--clips" -> clipNames = Arrays.asList(v.split(","));
                case "--families" -> families = Arrays.asList(v.split(","));
                case "--modes" -> modes = Arrays.stream(v.split(",")).map(m -> parseMode(m.trim())).toList();
                case "--frames" -> frames = Integer.parseInt(v);
                case "--engine-config" -> extra = v;
                case "--box-config" -> modeConfig.put(Mode.BOX, v);
                case "--oracle-config" -> modeConfig.put(Mode.ORACLE, v);
                case "--discovery-config" -> modeConfig.put(Mode.DISCOVERY, v);
                case "--commit" -> commit = v;
                case "--out" -> out = Path.of(v);
                case "--dump" -> dump = Path.of(v);
                default -> throw new IllegalArgumentException("unknown argument " + a + " (see the class doc)");
            }
        }
        if (!List.of("cpu", "cuda", "auto").contains(device)) {
            throw new IllegalArgumentException("--device must be cpu, cuda or auto, got " + device);
        }
        Path checkpoint = model != null ? model : locateModel();
        if (!Files.isRegularFile(checkpoint)) {
            throw new IllegalArgumentException("--model " + checkpoint + ": no such file");
        }
        List<Clip> clips = new ArrayList<>();
        for (Clip c : selectClips(families, clipNames)) {
            clips.add(frames > 0 && frames < c.frames() ? c.firstFrames(frames) : c);
        }
        boolean anyHard = clips.stream().anyMatch(c -> c instanceof SceneClip);
        if (commit == null) {
            commit = gitCommit();
        }

        StringBuilder md = new StringBuilder();
        StringBuilder tsv = new StringBuilder(ResultsTsv.HEADER).append('\n');
        md.append("# Tracking benchmark: synthetic clips through the whole engine").append(anyHard
                ? " (harder families, issue #15)" : "").append("\n\n");
        String date = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));
        boolean tracking = TrackHarness.knows("samstream.tracking");
        boolean discovery = TrackHarness.knows("samstream.discovery");
        String device0 = null;
        boolean baseline = false;
        for (Mode mode : modes) {
            String modeDefault = defaultConfig(mode, tracking, discovery);
            String hocon = modeConfig.getOrDefault(mode, modeDefault);
            md.append("## ").append(switch (mode) {
                case BOX -> "Box prompts (each object's box once, on its first fully visible frame)";
                case ORACLE -> "Reference: the ground-truth box of every frame (no tracking; the ceiling for box prompts)";
                case DISCOVERY -> "Automatic discovery (no prompts)";
            }).append("\n\n");
            if (hocon == null) {
                md.append("Not run: this build's reference.conf has no `samstream.discovery` (automatic discovery is"
                        + " not merged yet).\n\n");
                System.err.println("mode " + mode.label() + ": skipped, no samstream.discovery in this build");
                continue;
            }
            String engineConfig = (hocon + "\n" + extra).strip();
            SamstreamConfig config = TrackHarness.config(checkpoint, device, threads, engineConfig);
            List<TrackReport.Row> rows = new ArrayList<>();
            List<HardReport.Row> hardRows = new ArrayList<>();
            try (TrackHarness harness = new TrackHarness(config)) {
                if (device0 == null) {
                    device0 = describeDevice(harness.backendName());
                    md.insert(md.indexOf("\n\n") + 2, header(date, device0, commit, harness.modelName(), checkpoint,
                            clips));
                }
                for (Clip clip : clips) {
                    TrackHarness.ClipRun run = harness.run(clip, mode);
                    ClipScore.Result score = ClipScore.score(clip.name(), clip.truth(), run.predictions(),
                            run.promptFrames());
                    if (dump != null) {
                        Files.createDirectories(dump);
                        Files.writeString(dump.resolve(clip.name() + "-" + mode.label() + ".tsv"),
                                FrameDump.of(clip.truth(), run));
                    }
                    if (clip instanceof SceneClip scene) {
                        TrackHealth health = mode == Mode.BOX ? TrackHealth.of(clip.truth(), run) : null;
                        hardRows.add(new HardReport.Row(scene.family(), new TrackReport.Row(run, score), health));
                        if (health != null) {
                            System.err.printf(Locale.ROOT, "%s %s: false-track frames %d/%d, exits %d, never lost %d,"
                                    + " zero-area entries %d%n", mode.label(), clip.name(),
                                    health.falseFrames().falseFrames(), health.falseFrames().trackFrames(),
                                    health.lost().exits(), health.lost().neverReported(), health.zeroAreaEntries());
                        }
                    } else {
                        rows.add(new TrackReport.Row(run, score));
                    }
                    System.err.printf(Locale.ROOT, "%s %s: J %.3f F %.3f switches %d recall %d/%d false %d, %.2f frames/s%n",
                            mode.label(), clip.name(), score.j(), score.f(), score.idSwitches(), score.recall().found(),
                            score.recall().eligible(), score.falseTracks().size(), run.framesPerSecond());
                }
            }
            if (mode == Mode.BOX && !TrackHarness.trackingOn(engineConfig)) {
                baseline = true;
                md.append("**Pre-tracking baseline**: tracking is off (" + (tracking ? "`samstream.tracking.enabled` is"
                        + " not on in this config" : "this build has no `samstream.tracking`") + "), so the engine"
                        + " decodes each box prompt as given on every later frame: the box stays where the object"
                        + " was.\n\n");
            }
            md.append("Engine config (on top of reference.conf; model, device, no Kafka sink, no metrics endpoint set by"
                    + " the harness):\n\n```hocon\n").append(engineConfig.isEmpty() ? "# (nothing more)" : engineConfig)
                    .append("\n```\n\n");
            if (!rows.isEmpty() || hardRows.isEmpty()) {
                tsv.append(ResultsTsv.rows(mode.label(), rows));
                if (mode == Mode.ORACLE) {
                    md.append(TrackReport.boxTable(rows)).append('\n');
                } else if (mode == Mode.BOX) {
                    md.append(TrackReport.boxTable(rows)).append('\n').append(TrackReport.boxVerdict(rows))
                            .append("\n\n");
                } else {
                    md.append(TrackReport.discoveryTable(rows)).append('\n').append(TrackReport.discoveryVerdict(rows))
                            .append("\n\n");
                }
            }
            if (!hardRows.isEmpty()) {
                List<TrackReport.Row> plain = hardRows.stream().map(HardReport.Row::run).toList();
                tsv.append(ResultsTsv.rows(mode.label() + (rows.isEmpty() ? "" : "-hard"), plain));
                if (mode == Mode.DISCOVERY) {
                    md.append(TrackReport.discoveryTable(plain)).append('\n');
                } else {
                    boolean health = mode == Mode.BOX;
                    md.append("Per family:\n\n").append(HardReport.familyTable(hardRows, health,
                            config.tracking().lostAfter())).append("\nPer clip:\n\n")
                            .append(HardReport.clipTable(hardRows, health)).append('\n');
                    if (health) {
                        md.append("Exits (object, cause, exit frame, when reported lost):\n\n")
                                .append(HardReport.exitList(hardRows)).append('\n');
                    }
                }
            }
        }
        if (device0 == null) {
            md.insert(md.indexOf("\n\n") + 2, header(date, "(nothing ran)", commit, "-", checkpoint, clips));
        }
        if (baseline) {
            md.insert(md.indexOf("\n"), " (pre-tracking baseline)");
        }
        md.append(HOW_TO_READ);
        if (anyHard) {
            md.append('\n').append(HardReport.HOW_TO_READ);
        }
        System.out.println(md);
        if (out != null) {
            if (out.getParent() != null) {
                Files.createDirectories(out.getParent());
            }
            Files.writeString(out, md.toString());
            Path tsvFile = out.resolveSibling(out.getFileName().toString().replaceFirst("\\.md$", "") + ".tsv");
            Files.writeString(tsvFile, tsv.toString());
            System.err.println("wrote " + out + " and " + tsvFile);
        }
        // Akka and JCuda leave non-daemon threads behind on some paths: the report is written, end here.
        System.exit(0);
    }

    private static final String HOW_TO_READ = """
            How to read it: J = mask IoU per object per frame (an object absent and not predicted counts 1), F =
            boundary F-measure (boundary pixels matched within ceil(0.008 x diagonal) = 4 px at 320x240), both
            averaged over the frames from the object's prompt frame to the clip's end, then over objects (DAVIS
            style); J&F = their mean. An id switch: a ground-truth object matched (IoU >= 0.5, one-to-one) to
            another id than in the last frame where it was matched. False track: an id with a mask that never
            matched any object. Discovery recall: objects fully visible for 10+ consecutive frames that some id
            matched in one of those frames. Frames/s: clip frames over the time from adding the stream to its
            last record (clips run one at a time; the first includes warm-up). Definitions:
            `bench/src/main/java/io/samstream/bench/track/` (ClipScore and the classes it uses); clips: TrackClips.
            """;

    /**
     * A mode's engine config when none is given: box prompts with tracking and without discovery (whose
     * objects would compete with the prompted ones); the reference with neither; discovery with both. Keys
     * this build does not know are left out (and discovery mode is then skipped: null).
     */
    static String defaultConfig(Mode mode, boolean tracking, boolean discovery) {
        String dOff = discovery ? "samstream.discovery.enabled = off\n" : "";
        return switch (mode) {
            case BOX -> ((tracking ? "samstream.tracking.enabled = on\n" : "") + dOff).strip();
            case ORACLE -> ((tracking ? "samstream.tracking.enabled = off\n" : "") + dOff).strip();
            case DISCOVERY -> discovery
                    ? ("samstream.discovery.enabled = on\n" + (tracking ? "samstream.tracking.enabled = on" : "")).strip()
                    : null;
        };
    }

    /**
     * The clips to run: by name ({@code --clips}, from the default and the harder sets), else by family
     * ({@code --families}, in the order named), else the default four; both given: the named clips of those
     * families.
     */
    static List<Clip> selectClips(List<String> families, List<String> clipNames) {
        List<Clip> fromFamilies = new ArrayList<>();
        if (families == null) {
            fromFamilies.addAll(TrackClips.all().values());
        } else {
            for (String f : families) {
                if (f.trim().equals("default")) {
                    fromFamilies.addAll(TrackClips.all().values());
                } else {
                    fromFamilies.addAll(HardClips.ofFamilies(List.of(f)));
                }
            }
        }
        if (clipNames == null) {
            return fromFamilies;
        }
        Map<String, Clip> known = new LinkedHashMap<>();
        (families == null ? concat(TrackClips.all().values(), HardClips.all().values()) : fromFamilies)
                .forEach(c -> known.put(c.name(), c));
        List<Clip> out = new ArrayList<>();
        for (String n : clipNames) {
            Clip c = known.get(n.trim());
            if (c == null) {
                throw new IllegalArgumentException("unknown clip '" + n + "' (clips: " + String.join(", ", known.keySet())
                        + ")");
            }
            out.add(c);
        }
        return out;
    }

    private static List<Clip> concat(java.util.Collection<? extends Clip> a, java.util.Collection<? extends Clip> b) {
        List<Clip> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    private static String header(String date, String device, String commit, String modelName, Path checkpoint,
            List<Clip> clips) {
        StringBuilder b = new StringBuilder();
        b.append("- date: ").append(date).append('\n');
        b.append("- device: ").append(device).append('\n');
        loadAverage().ifPresent(l -> b.append("- load average at the start (1, 5, 15 min; frames/s depend on it): ")
                .append(l).append('\n'));
        b.append("- commit: ").append(commit).append('\n');
        b.append("- model: ").append(modelName).append(" (").append(checkpoint.getFileName()).append(")\n");
        b.append("- clips: ");
        for (int i = 0; i < clips.size(); i++) {
            Clip c = clips.get(i);
            b.append(i == 0 ? "" : ", ").append(c.name()).append(" (").append(c.describe()).append(')');
        }
        b.append("\n\n");
        return b.toString();
    }

    private static Mode parseMode(String m) {
        for (Mode mode : Mode.values()) {
            if (mode.label().equals(m)) {
                return mode;
            }
        }
        throw new IllegalArgumentException("--modes: unknown mode '" + m + "' (box, oracle, discovery)");
    }

    /** The bundled model: under $SAMSTREAM_HOME, or the working directory or one of its parents. */
    private static Path locateModel() {
        String home = System.getenv("SAMSTREAM_HOME");
        if (home != null && !home.isBlank() && Files.isRegularFile(Path.of(home).resolve(MODEL))) {
            return Path.of(home).resolve(MODEL);
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve(MODEL))) {
                return p.resolve(MODEL);
            }
        }
        throw new IllegalArgumentException("no --model given and " + MODEL + " not found from the working directory"
                + " (run from the samstream checkout, or set SAMSTREAM_HOME)");
    }

    /** The backend's own words, with the CPU's model for CPU runs. */
    private static String describeDevice(String backend) {
        if (!backend.startsWith("cpu")) {
            return backend;
        }
        String cpu = "?";
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    cpu = line.substring(line.indexOf(':') + 1).trim();
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            // Not Linux: the backend's name alone.
        }
        return backend + " on " + cpu + ", " + Runtime.getRuntime().availableProcessors() + " cores visible";
    }

    /** /proc/loadavg's first three figures, where there is one. */
    private static java.util.Optional<String> loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return java.util.Optional.of(f[0] + ", " + f[1] + ", " + f[2]);
        } catch (IOException | RuntimeException e) {
            return java.util.Optional.empty();
        }
    }

    private static String gitCommit() {
        try {
            Process p = new ProcessBuilder("git", "rev-parse", "--short=12", "HEAD").redirectErrorStream(true).start();
            String s;
            try (InputStream in = p.getInputStream()) {
                s = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            }
            if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 && s.matches("[0-9a-f]{7,40}")) {
                Process d = new ProcessBuilder("git", "diff", "--quiet", "HEAD").start();
                boolean dirty = d.waitFor(10, TimeUnit.SECONDS) && d.exitValue() == 1;
                return s + (dirty ? "+dirty" : "");
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            // No git here: unknown unless --commit says.
        }
        return "unknown (no git; pass --commit)";
    }
}
