package io.samstream.bench.track;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResultsTsvTest {
    private static String tsv(String... rows) {
        return ResultsTsv.HEADER + "\n" + String.join("\n", rows) + "\n";
    }

    @Test
    void theLargestDifferenceOfJFJfAndRecallDecides() {
        var a = ResultsTsv.parse(tsv(
                "box\tocclusion\t4\t0.9000\t0.9500\t0.9250\t0\t0\t4\t4\t1.0000\t48\t10.00",
                "box\tall\t4\t0.9000\t0.9500\t0.9250\t0\t0\t4\t4\t1.0000\t48\t10.00"), "a");
        var b = ResultsTsv.parse(tsv(
                "box\tocclusion\t4\t0.8850\t0.9400\t0.9125\t1\t0\t4\t3\t0.7500\t48\t2.00",
                "box\tall\t4\t0.8850\t0.9400\t0.9125\t1\t0\t4\t4\t1.0000\t48\t2.00"), "b");
        ResultsTsv.Comparison c = ResultsTsv.compare(a, b);
        // Recall of occlusion: 1.0 against 0.75.
        assertEquals(0.25, c.maxDifference(), 1e-9);
        assertEquals(List.of(), c.onlyInOne());
        assertTrue(c.table().contains("| box | all | 0.900 / 0.885 | 0.950 / 0.940 | 0.925 / 0.913 | 1.000 / 1.000 | 0 / 1 |"),
                c.table());
    }

    @Test
    void rowsOfOneRunOnlyAndFiguresOnOneSideOnlyAreReported() {
        var a = ResultsTsv.parse(tsv("discovery\tall\t0\tNaN\tNaN\tNaN\t0\t0\t4\t4\t1.0000\t48\t1.00",
                "oracle\tall\t4\t0.9000\t0.9000\t0.9000\t0\t0\t4\t4\t1.0000\t48\t1.00"), "a");
        var b = ResultsTsv.parse(tsv("discovery\tall\t0\tNaN\tNaN\tNaN\t0\t0\t4\t4\t1.0000\t48\t1.00",
                "box\tall\t4\t0.9000\t0.9000\t0.9000\t0\t0\t4\t4\t1.0000\t48\t1.00"), "b");
        ResultsTsv.Comparison c = ResultsTsv.compare(a, b);
        assertEquals(0.0, c.maxDifference(), "J and F are NaN on both sides in discovery mode: no difference");
        assertEquals(List.of("oracle/all", "box/all"), c.onlyInOne());
        var d = ResultsTsv.parse(tsv("discovery\tall\t0\t0.5000\tNaN\tNaN\t0\t0\t4\t4\t1.0000\t48\t1.00"), "d");
        assertEquals(Double.POSITIVE_INFINITY, ResultsTsv.compare(a, d).maxDifference());
        assertThrows(IllegalArgumentException.class, () -> ResultsTsv.parse("mode\tclip\n", "x"));
    }

    @Test
    void aRunsRowsReadBackAsWritten() {
        SyntheticClip clip = TrackClips.occlusion().firstFrames(12);
        ClipTruth truth = clip.truth();
        List<Map<Integer, boolean[]>> predictions = new ArrayList<>();
        for (int t = 0; t < truth.frames(); t++) {
            Map<Integer, boolean[]> m = new HashMap<>();
            m.put(0, truth.mask(0, t)); // object 0 only, perfectly; object 1 never
            predictions.add(m);
        }
        Map<Integer, Integer> prompts = Map.of(0, 0, 1, 0);
        TrackHarness.ClipRun run = new TrackHarness.ClipRun(clip, TrackHarness.Mode.BOX, predictions, prompts, 4.0);
        ClipScore.Result score = ClipScore.score(clip.name(), truth, predictions, prompts);
        String text = ResultsTsv.HEADER + "\n" + ResultsTsv.rows("box", List.of(new TrackReport.Row(run, score)));
        var rows = ResultsTsv.parse(text, "t");
        assertEquals(List.of("box/occlusion", "box/all"), List.copyOf(rows.keySet()));
        Map<String, String> all = rows.get("box/all");
        assertEquals("0.5000", all.get("j"), "object 0 right (1), object 1 missed (0)");
        assertEquals("0.5000", all.get("jf"));
        assertEquals("12", all.get("frames"));
        assertEquals("4.00", all.get("seconds"));
        // Objects 0..3 are all fully visible in frames 0-9: eligible; only object 0 is found.
        assertEquals("4", all.get("eligible"));
        assertEquals("1", all.get("found"));
    }
}
