package io.samstream.bench.track;

import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** The markdown tables of a benchmark run: one per mode, a row per clip and one for all clips. */
public final class TrackReport {
    /** Issue #6's targets. */
    public static final double TARGET_JF = 0.80;
    public static final int TARGET_MAX_SWITCHES = 1;
    public static final double TARGET_RECALL = 0.90;

    private TrackReport() {}

    /** One clip's run and its figures. */
    public record Row(TrackHarness.ClipRun run, ClipScore.Result score) {}

    /** The box-prompt table: J, F, J&F per clip and over every prompted object of every clip. */
    public static String boxTable(List<Row> rows) {
        StringBuilder b = new StringBuilder();
        b.append("| clip | objects (prompt frame) | J | F | J&F | id switches | false tracks | frames | frames/s |"
                + " J per object |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|\n");
        for (Row r : rows) {
            ClipScore.Result s = r.score();
            b.append(String.format(Locale.ROOT, "| %s | %d (%s) | %.3f | %.3f | %.3f | %d | %d | %d | %.2f | %s |%n",
                    s.clip(), s.objects().size(),
                    s.objects().stream().map(o -> String.valueOf(o.fromFrame())).collect(Collectors.joining(", ")),
                    s.j(), s.f(), s.jf(), s.idSwitches(), s.falseTracks().size(), r.run().clip().frames(),
                    r.run().framesPerSecond(),
                    s.objects().stream().map(o -> String.format(Locale.ROOT, "%.2f", o.j()))
                            .collect(Collectors.joining(" / "))));
        }
        Totals t = totals(rows);
        b.append(String.format(Locale.ROOT, "| **all** | %d | **%.3f** | **%.3f** | **%.3f** | %d (max %d per clip) | %d | %d | %.2f |"
                + " |%n", t.objects, t.j, t.f, (t.j + t.f) / 2, t.switches, t.maxSwitches, t.falseTracks, t.frames,
                t.frames / t.seconds));
        return b.toString();
    }

    /** The discovery table: recall, id switches and false tracks per clip and overall. */
    public static String discoveryTable(List<Row> rows) {
        StringBuilder b = new StringBuilder();
        b.append("| clip | objects fully visible 10+ frames | found | recall | predicted ids | id switches |"
                + " false tracks | frames | frames/s |\n");
        b.append("|---|---|---|---|---|---|---|---|---|\n");
        for (Row r : rows) {
            ClipScore.Result s = r.score();
            b.append(String.format(Locale.ROOT, "| %s | %d | %d | %.2f | %d | %d | %d | %d | %.2f |%n", s.clip(),
                    s.recall().eligible(), s.recall().found(), s.recall().recall(), s.predicted(), s.idSwitches(),
                    s.falseTracks().size(), r.run().clip().frames(), r.run().framesPerSecond()));
        }
        Totals t = totals(rows);
        b.append(String.format(Locale.ROOT, "| **all** | %d | %d | **%.2f** | %d | %d (max %d per clip) | %d | %d | %.2f |%n",
                t.eligible, t.found, t.eligible == 0 ? Double.NaN : (double) t.found / t.eligible, t.predicted,
                t.switches, t.maxSwitches, t.falseTracks, t.frames, t.frames / t.seconds));
        return b.toString();
    }

    /** Whether the box-prompt figures meet issue #6's targets, in a sentence. */
    public static String boxVerdict(List<Row> rows) {
        Totals t = totals(rows);
        double jf = (t.j + t.f) / 2;
        return String.format(Locale.ROOT, "Targets (issue #6): J&F >= %.2f: %s (%.3f); id switches <= %d per clip: %s"
                + " (max %d).", TARGET_JF, jf >= TARGET_JF ? "met" : "**not met**", jf, TARGET_MAX_SWITCHES,
                t.maxSwitches <= TARGET_MAX_SWITCHES ? "met" : "**not met**", t.maxSwitches);
    }

    public static String discoveryVerdict(List<Row> rows) {
        Totals t = totals(rows);
        double recall = t.eligible == 0 ? Double.NaN : (double) t.found / t.eligible;
        return String.format(Locale.ROOT, "Targets (issue #6): discovery finds >= %.0f %% of the objects fully visible"
                + " for 10+ frames: %s (%d of %d); id switches <= %d per clip: %s (max %d).", 100 * TARGET_RECALL,
                recall >= TARGET_RECALL ? "met" : "**not met**", t.found, t.eligible, TARGET_MAX_SWITCHES,
                t.maxSwitches <= TARGET_MAX_SWITCHES ? "met" : "**not met**", t.maxSwitches);
    }

    /** Sums over clips; J and F are means over every prompted object of every clip (as DAVIS averages). */
    private record Totals(int objects, double j, double f, int switches, int maxSwitches, int falseTracks,
            int eligible, int found, int predicted, int frames, double seconds) {}

    private static Totals totals(List<Row> rows) {
        int objects = 0;
        double j = 0;
        double f = 0;
        int switches = 0;
        int maxSwitches = 0;
        int falseTracks = 0;
        int eligible = 0;
        int found = 0;
        int predicted = 0;
        int frames = 0;
        double seconds = 0;
        for (Row r : rows) {
            ClipScore.Result s = r.score();
            for (ClipScore.ObjectScore o : s.objects()) {
                objects++;
                j += o.j();
                f += o.f();
            }
            switches += s.idSwitches();
            maxSwitches = Math.max(maxSwitches, s.idSwitches());
            falseTracks += s.falseTracks().size();
            eligible += s.recall().eligible();
            found += s.recall().found();
            predicted += s.predicted();
            frames += r.run().clip().frames();
            seconds += r.run().seconds();
        }
        return new Totals(objects, objects == 0 ? Double.NaN : j / objects, objects == 0 ? Double.NaN : f / objects,
                switches, maxSwitches, falseTracks, eligible, found, predicted, frames, seconds);
    }
}
