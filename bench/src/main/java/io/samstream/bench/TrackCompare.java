package io.samstream.bench;

import io.samstream.bench.track.ResultsTsv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Compares two TrackEval runs (their {@code .tsv} files, e.g. CPU and CUDA) figure by figure: issue #6 wants
 * the same figures on CPU and GPU within 0.02.
 *
 * <pre>java -cp ... io.samstream.bench.TrackCompare A.tsv B.tsv [--tolerance 0.02] [--out FILE.md]</pre>
 *
 * Exit status 0 when every J, F, J&F and recall of the rows both runs have differ by at most the tolerance
 * and no row is missing from one of them, 1 otherwise.
 */
public final class TrackCompare {
    private TrackCompare() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            throw new IllegalArgumentException("usage: TrackCompare A.tsv B.tsv [--tolerance 0.02] [--out FILE.md]");
        }
        Path a = Path.of(args[0]);
        Path b = Path.of(args[1]);
        double tolerance = 0.02;
        Path out = null;
        for (int i = 2; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            switch (args[i]) {
                case "--tolerance" -> tolerance = Double.parseDouble(args[i + 1]);
                case "--out" -> out = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        ResultsTsv.Comparison c = ResultsTsv.compare(ResultsTsv.parse(Files.readString(a), a.toString()),
                ResultsTsv.parse(Files.readString(b), b.toString()));
        boolean ok = c.maxDifference() <= tolerance && c.onlyInOne().isEmpty();
        String md = "# Tracking benchmark: " + a.getFileName() + " vs " + b.getFileName() + "\n\n"
                + "Each cell: first / second run.\n\n" + c.table() + "\n"
                + String.format(Locale.ROOT, "Largest difference of J, F, J&F, recall: %.4f; tolerance %.3f: %s.%n",
                        c.maxDifference(), tolerance, ok ? "**within**" : "**not within**")
                + (c.onlyInOne().isEmpty() ? "" : "Rows in one run only: " + String.join(", ", c.onlyInOne()) + "\n");
        System.out.println(md);
        if (out != null) {
            Files.writeString(out, md);
        }
        System.exit(ok ? 0 : 1);
    }
}
