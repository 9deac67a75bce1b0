package io.samstream.bench;

import io.samstream.bench.track.HardClips;
import io.samstream.bench.track.ResultsTsv;
import io.samstream.bench.track.SceneClip;
import io.samstream.bench.track.TrackClips;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Memory mode next to kalman mode (issue #18): the box-prompt figures of TrackEval runs on the same clips, one
 * side with a SAM 2.1 checkpoint (memory mode), the other with a SAM one (kalman mode), per clip and per family,
 * and whether memory mode is at least as good (J&F) on the occlusion and contact families.
 *
 * <pre>java -cp ... io.samstream.bench.TrackModes --kalman A.tsv[,B.tsv] --memory C.tsv[,D.tsv] [--out FILE.md]</pre>
 *
 * Each TSV is a TrackEval {@code --out} file (its {@code box} rows are read; several files per side are joined,
 * e.g. the default and the hard families). A clip in one side only is listed and left out of the families.
 */
public final class TrackModes {
    /** The families the issue wants memory mode at least as good on. */
    static final List<String> OCCLUSION_AND_CONTACT = List.of("occlusion", "long-occlusion", "shake-contact");

    private TrackModes() {}

    /** One clip's box-mode figures. */
    record ClipFigures(String clip, String family, int objects, double jf, int idSwitches) {}

    public static void main(String[] args) throws Exception {
        List<Path> kalman = new ArrayList<>();
        List<Path> memory = new ArrayList<>();
        Path out = null;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            switch (args[i]) {
                case "--kalman" -> List.of(args[i + 1].split(",")).forEach(p -> kalman.add(Path.of(p)));
                case "--memory" -> List.of(args[i + 1].split(",")).forEach(p -> memory.add(Path.of(p)));
                case "--out" -> out = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + " (--kalman A.tsv[,B.tsv] --memory C.tsv[,D.tsv] [--out FILE.md])");
            }
        }
        if (kalman.isEmpty() || memory.isEmpty()) {
            throw new IllegalArgumentException("--kalman and --memory each need a TrackEval TSV");
        }
        String md = report(read(kalman), read(memory));
        System.out.println(md);
        if (out != null) {
            Files.writeString(out, md);
        }
    }

    /** The box rows of TrackEval TSVs, by clip (the "all" rows left out). */
    static Map<String, ClipFigures> read(List<Path> files) throws java.io.IOException {
        Map<String, ClipFigures> out = new LinkedHashMap<>();
        for (Path p : files) {
            out.putAll(boxRows(ResultsTsv.parse(Files.readString(p), p.toString())));
        }
        return out;
    }

    static Map<String, ClipFigures> boxRows(Map<String, Map<String, String>> rows) {
        Map<String, ClipFigures> out = new LinkedHashMap<>();
        for (Map<String, String> r : rows.values()) {
            String clip = r.get("clip");
            if (!r.get("mode").startsWith("box") || clip.equals("all")) {
                continue;
            }
            out.put(clip, new ClipFigures(clip, family(clip), Integer.parseInt(r.get("objects")),
                    Double.parseDouble(r.get("jf")), Integer.parseInt(r.get("id_switches"))));
        }
        return out;
    }

    /** A harder clip's family; a default clip is its own family (its name: constant-motion, occlusion, ...). */
    static String family(String clip) {
        SceneClip scene = HardClips.all().get(clip);
        if (scene != null) {
            return scene.family();
        }
        if (TrackClips.all().containsKey(clip)) {
            return clip;
        }
        throw new IllegalArgumentException("unknown clip '" + clip + "' (neither TrackClips nor HardClips)");
    }

    /** The markdown report: per clip, per family (J&F averaged over objects), and the verdict. */
    static String report(Map<String, ClipFigures> kalman, Map<String, ClipFigures> memory) {
        StringBuilder b = new StringBuilder("| family | clip | objects | J&F kalman (SAM) | J&F memory (SAM 2.1) | memory"
                + " - kalman | id switches kalman / memory |\n|---|---|---|---|---|---|---|\n");
        Map<String, double[]> families = new LinkedHashMap<>(); // objects, kalman J&F sum, memory J&F sum, clips
        List<String> oneSide = new ArrayList<>();
        for (ClipFigures k : kalman.values()) {
            ClipFigures m = memory.get(k.clip());
            if (m == null) {
                oneSide.add(k.clip() + " (kalman only)");
                continue;
            }
            b.append(String.format(Locale.ROOT, "| %s | %s | %d | %.3f | %.3f | %+.3f | %d / %d |%n", k.family(),
                    k.clip(), k.objects(), k.jf(), m.jf(), m.jf() - k.jf(), k.idSwitches(), m.idSwitches()));
            double[] f = families.computeIfAbsent(k.family(), x -> new double[4]);
            f[0] += k.objects();
            f[1] += k.jf() * k.objects();
            f[2] += m.jf() * k.objects();
            f[3]++;
        }
        memory.keySet().stream().filter(c -> !kalman.containsKey(c)).forEach(c -> oneSide.add(c + " (memory only)"));
        b.append("\nPer family (J&F averaged over objects):\n\n| family | clips | objects | J&F kalman (SAM) | J&F memory"
                + " (SAM 2.1) | memory - kalman | memory at least as good |\n|---|---|---|---|---|---|---|\n");
        List<String> worse = new ArrayList<>();
        List<String> checked = new ArrayList<>();
        for (Map.Entry<String, double[]> e : families.entrySet()) {
            double[] f = e.getValue();
            double k = f[1] / f[0];
            double m = f[2] / f[0];
            boolean ok = m >= k;
            if (OCCLUSION_AND_CONTACT.contains(e.getKey())) {
                checked.add(e.getKey());
                if (!ok) {
                    worse.add(e.getKey());
                }
            }
            b.append(String.format(Locale.ROOT, "| %s | %d | %d | %.3f | %.3f | %+.3f | %s |%n", e.getKey(), (int) f[3],
                    (int) f[0], k, m, m - k, ok ? "yes" : "no"));
        }
        b.append('\n');
        if (checked.isEmpty()) {
            b.append("No occlusion or contact family (").append(String.join(", ", OCCLUSION_AND_CONTACT))
                    .append(") in both runs: no verdict.\n");
        } else if (worse.isEmpty()) {
            b.append("**Memory mode is at least as good** (J&F) on ").append(String.join(", ", checked)).append(".\n");
        } else {
            b.append("**Memory mode is worse** (J&F) on ").append(String.join(", ", worse)).append(" (checked: ")
                    .append(String.join(", ", checked)).append(").\n");
        }
        if (!oneSide.isEmpty()) {
            b.append("\nIn one run only (left out): ").append(String.join(", ", oneSide)).append(".\n");
        }
        return b.toString();
    }
}
