package io.samstream.bench.track;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The figures of a run as tab-separated rows (one per mode and clip, plus the "all" row of each mode), so
 * that two runs (CPU and CUDA) can be compared figure by figure ({@link #compare}).
 */
public final class ResultsTsv {
    /** The header line. */
    public static final String HEADER = "mode\tclip\tobjects\tj\tf\tjf\tid_switches\tfalse_tracks\teligible\tfound\trecall"
            + "\tframes\tseconds";
    /** The figures compared against the tolerance. */
    private static final List<String> COMPARED = List.of("j", "f", "jf", "recall");

    private ResultsTsv() {}

    /** One mode's rows (clips, then "all"), without the header. */
    public static String rows(String mode, List<TrackReport.Row> rows) {
        StringBuilder b = new StringBuilder();
        int objects = 0;
        double j = 0;
        double f = 0;
        int switches = 0;
        int falseTracks = 0;
        int eligible = 0;
        int found = 0;
        int frames = 0;
        double seconds = 0;
        for (TrackReport.Row r : rows) {
            ClipScore.Result s = r.score();
            line(b, mode, s.clip(), s.objects().size(), s.j(), s.f(), s.idSwitches(), s.falseTracks().size(),
                    s.recall().eligible(), s.recall().found(), r.run().clip().frames(), r.run().seconds());
            for (ClipScore.ObjectScore o : s.objects()) {
                objects++;
                j += o.j();
                f += o.f();
            }
            switches += s.idSwitches();
            falseTracks += s.falseTracks().size();
            eligible += s.recall().eligible();
            found += s.recall().found();
            frames += r.run().clip().frames();
            seconds += r.run().seconds();
        }
        line(b, mode, "all", objects, objects == 0 ? Double.NaN : j / objects, objects == 0 ? Double.NaN : f / objects,
                switches, falseTracks, eligible, found, frames, seconds);
        return b.toString();
    }

    private static void line(StringBuilder b, String mode, String clip, int objects, double j, double f, int switches,
            int falseTracks, int eligible, int found, int frames, double seconds) {
        b.append(String.format(Locale.ROOT, "%s\t%s\t%d\t%.4f\t%.4f\t%.4f\t%d\t%d\t%d\t%d\t%.4f\t%d\t%.2f%n", mode, clip,
                objects, j, f, (j + f) / 2, switches, falseTracks, eligible, found,
                eligible == 0 ? Double.NaN : (double) found / eligible, frames, seconds));
    }

    /** Rows by "mode/clip", each a map of column -> text. */
    public static Map<String, Map<String, String>> parse(String tsv, String origin) {
        List<String> lines = tsv.lines().filter(l -> !l.isBlank()).toList();
        if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
            throw new IllegalArgumentException(origin + ": not a TrackEval TSV (the first line is not its header)");
        }
        String[] columns = HEADER.split("\t");
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        for (int i = 1; i < lines.size(); i++) {
            String[] v = lines.get(i).split("\t");
            if (v.length != columns.length) {
                throw new IllegalArgumentException(origin + " line " + (i + 1) + ": " + v.length + " fields, expected "
                        + columns.length);
            }
            Map<String, String> row = new LinkedHashMap<>();
            for (int c = 0; c < columns.length; c++) {
                row.put(columns[c], v[c]);
            }
            out.put(v[0] + "/" + v[1], row);
        }
        return out;
    }

    /** The comparison of two runs: a markdown table and the largest difference of J, F, J&F and recall. */
    public record Comparison(String table, double maxDifference, List<String> onlyInOne) {}

    public static Comparison compare(Map<String, Map<String, String>> a, Map<String, Map<String, String>> b) {
        StringBuilder t = new StringBuilder("| mode | clip | J | F | J&F | recall | id switches | false tracks | max diff |\n"
                + "|---|---|---|---|---|---|---|---|---|\n");
        double max = 0;
        List<String> onlyInOne = new ArrayList<>();
        for (Map.Entry<String, Map<String, String>> e : a.entrySet()) {
            Map<String, String> ra = e.getValue();
            Map<String, String> rb = b.get(e.getKey());
            if (rb == null) {
                onlyInOne.add(e.getKey());
                continue;
            }
            double rowMax = 0;
            StringBuilder cells = new StringBuilder();
            for (String c : COMPARED) {
                double x = Double.parseDouble(ra.get(c));
                double y = Double.parseDouble(rb.get(c));
                boolean bothNaN = Double.isNaN(x) && Double.isNaN(y);
                double d = bothNaN ? 0 : Math.abs(x - y);
                if (Double.isNaN(d)) {
                    d = Double.POSITIVE_INFINITY; // a figure on one side only
                }
                rowMax = Math.max(rowMax, d);
                cells.append(bothNaN ? "- | " : String.format(Locale.ROOT, "%.3f / %.3f | ", x, y));
            }
            max = Math.max(max, rowMax);
            t.append("| ").append(ra.get("mode")).append(" | ").append(ra.get("clip")).append(" | ").append(cells)
                    .append(ra.get("id_switches")).append(" / ").append(rb.get("id_switches")).append(" | ")
                    .append(ra.get("false_tracks")).append(" / ").append(rb.get("false_tracks")).append(" | ")
                    .append(String.format(Locale.ROOT, "%.3f", rowMax)).append(" |\n");
        }
        for (String k : b.keySet()) {
            if (!a.containsKey(k)) {
                onlyInOne.add(k);
            }
        }
        return new Comparison(t.toString(), max, onlyInOne);
    }
}
