package io.samstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code Sam3VideoBench --profile} on the CPU at the tiny configuration: every part the step calls is timed, once per
 * step where the step calls it once, and the parts fit inside the step.
 */
class Sam3StepProfileTest {
    private static final String VOCAB = "../gpu/src/test/resources/fixtures/sam3/tokenizer/test_bpe_vocab.txt.gz";

    @Test
    void aProfileTimesEachPartOfAStep(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("sam3.tsv");
        Sam3VideoBench.main(new String[] {out.toString(), "--config", "tiny", "--device", "cpu", "--scenarios", "1x1",
            "--frames", "1", "--repeats", "1", "--warmup", "2", "--threads", "2", "--profile", "3", "--vocab", VOCAB});
        Map<String, double[]> parts = new LinkedHashMap<>();
        for (String line : Files.readAllLines(out)) {
            String[] f = line.split("\t");
            if (f[0].equals("#profile") && !f[1].equals("part")) {
                parts.put(f[1], new double[] {Double.parseDouble(f[2]), Double.parseDouble(f[3])});
            }
        }
        for (String once : List.of("step", "trunk.forward", "neck.forward", "tracker neck.forward", "tracker.features",
                "fusion encoder.forward", "decoder.forward", "detect (parts and CPU scoring)")) {
            assertTrue(parts.containsKey(once), once + " in " + parts.keySet());
            assertEquals(1.0, parts.get(once)[1], 1e-9, once + ": calls a step");
            assertTrue(parts.get(once)[0] > 0, once + ": time");
        }
        double inside = 0;
        for (String p : List.of("trunk.forward", "neck.forward", "tracker neck.forward", "tracker.features",
                "detect (parts and CPU scoring)")) {
            inside += parts.get(p)[0];
        }
        assertTrue(inside <= parts.get("step")[0], "parts " + inside + " ms within the step's " + parts.get("step")[0]);
        assertTrue(parts.get("fusion encoder.forward")[0] + parts.get("decoder.forward")[0]
                <= parts.get("detect (parts and CPU scoring)")[0], "the detector's parts within the detection");
    }

    @Test
    void aNegativeProfileIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Sam3VideoBench.main(new String[] {"x.tsv", "--config",
            "tiny", "--device", "cpu", "--profile", "-1", "--vocab", VOCAB}));
    }
}
