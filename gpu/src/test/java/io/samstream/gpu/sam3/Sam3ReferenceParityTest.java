package io.samstream.gpu.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.sam2.DeterministicWeights;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The CPU reference against Meta's SAM 3 image model (tools/sam3_fixtures/make_sam3_fixtures.py): the tiny
 * configuration from its committed fp16 checkpoint ({@code sam3_tiny.pt}, read by the restricted loader, complex
 * rotary tables included), and Meta's release shapes from a fixture folder named by
 * {@code -Dsamstream.fixtures.sam3Release=DIR} (or SAMSTREAM_SAM3_RELEASE_FIXTURE; not committed: ~30 MB; it needs a
 * 12 GB heap and minutes on a few cores: tools/sam3_fixtures/run_release_parity.sh). Each skips with the reason while
 * its fixture (or heap) is missing.
 */
class Sam3ReferenceParityTest {
    static final Path TINY = Path.of("src/test/resources/fixtures/sam3/tiny");
    static final int THREADS = Math.max(2, Runtime.getRuntime().availableProcessors());

    private static void assumeTinyFixture() {
        Assumptions.assumeTrue(Files.isRegularFile(TINY.resolve("meta.json")),
                "no SAM 3 tiny fixture yet in " + TINY + ": make it on the GPU machine with "
                        + "tools/sam3_fixtures/run_on_device.sh (see tools/sam3_fixtures/README.md)");
    }

    @Test
    void tinyCheckpointHoldsMetasKeysAndTheDeterministicWeights() throws IOException {
        assumeTinyFixture();
        checkKeysAgainstMeta(CheckpointLoader.load(TINY.resolve("sam3_tiny.pt")), TINY.resolve("keys.txt"));
    }

    @Test
    void tinyMatchesMeta() throws IOException {
        assumeTinyFixture();
        StateDict checkpoint = CheckpointLoader.load(TINY.resolve("sam3_tiny.pt"));
        Sam3Config config = Sam3ConfigInference.infer(checkpoint);
        assertEquals(Sam3Weights.TINY.detector(), config.detector());
        assertEquals(Sam3Weights.TINY.text(), config.text());
        assertArrayEquals(Sam3Weights.TINY.vision().globalBlocks(), config.vision().globalBlocks());
        try (Sam3Model model = new Sam3Model(checkpoint, config, THREADS)) {
            Sam3FixtureRun run = new Sam3FixtureRun(TINY, model);
            Sam3Tokenizer tokenizer = Sam3Tokenizer.load(Sam3ModelTest.VOCAB);
            for (int i = 0; i < run.meta.get("prompts").size(); i++) {
                String phrase = run.meta.get("prompts").get(i).get("text").asText();
                assertArrayEquals(Sam3FixtureRun.toInts(run.longs("p" + i + "_tokens")), tokenizer.tokenize(phrase,
                        32), "tokens of '" + phrase + "'");
            }
            try {
                run.checkPreprocessing();
                run.checkPrompts(run.checkImage(2e-5f), 5e-5f);
            } finally {
                run.report().forEach(System.out::println);
            }
        }
    }

    @Test
    void releaseShapesMatchMeta() throws IOException {
        String where = System.getProperty("samstream.fixtures.sam3Release",
                System.getenv("SAMSTREAM_SAM3_RELEASE_FIXTURE"));
        Assumptions.assumeTrue(where != null && Files.isRegularFile(Path.of(where, "keys.txt")),
                "no SAM 3 release-shapes fixture (set -Dsamstream.fixtures.sam3Release=DIR or "
                        + "SAMSTREAM_SAM3_RELEASE_FIXTURE; made by tools/sam3_fixtures/run_on_device.sh)");
        long heap = Runtime.getRuntime().maxMemory();
        Assumptions.assumeTrue(heap >= (11L << 30), "the release shapes need a heap of 12 GB or more (this JVM has "
                + (heap >> 20) + " MiB; surefire's is 4 GB): run tools/sam3_fixtures/run_release_parity.sh DIR");
        Path dir = Path.of(where);
        StateDict sd = DeterministicWeights.fromKeyList(dir.resolve("keys.txt"), Map.of());
        Sam3Config config = Sam3ConfigInference.infer(sd);
        assertEquals(1008, config.vision().imageSize());
        assertArrayEquals(new int[] {7, 15, 23, 31}, config.vision().globalBlocks());
        assertEquals(Sam3ConfigInference.RELEASE_DETECTOR, config.detector(), "the release detector the GPU tests use");
        try (Sam3Model model = new Sam3Model(sd, config, THREADS)) {
            Sam3FixtureRun run = new Sam3FixtureRun(dir, model);
            try {
                run.checkPreprocessing();
                run.checkPrompts(run.checkImage(2e-4f), 2e-4f);
            } finally {
                run.report().forEach(System.out::println);
            }
        }
    }

    /** The fixture's key list is what Meta's model holds, and what Sam3Weights generates for the tiny config. */
    private static void checkKeysAgainstMeta(StateDict checkpoint, Path keysFile) throws IOException {
        Map<String, int[]> meta = new LinkedHashMap<>();
        for (String line : Files.readAllLines(keysFile)) {
            if (!line.isBlank()) {
                String[] parts = line.trim().split(" ");
                meta.put(parts[0], Arrays.stream(parts[1].split(",")).mapToInt(Integer::parseInt).toArray());
            }
        }
        Map<String, int[]> ours = Sam3Weights.shapes(Sam3Weights.TINY);
        assertEquals(new java.util.TreeSet<>(meta.keySet()), new java.util.TreeSet<>(ours.keySet()),
                "Sam3Weights' key list against Meta's");
        for (Map.Entry<String, int[]> e : meta.entrySet()) {
            assertArrayEquals(e.getValue(), ours.get(e.getKey()), e.getKey());
            Tensor t = checkpoint.get(e.getKey());
            assertArrayEquals(e.getValue(), t.shape(), "checkpoint shape of " + e.getKey());
            if (!e.getKey().endsWith("freqs_cis")) {
                assertArrayEquals(DeterministicWeights.values(e.getKey(), e.getValue()), t.data(),
                        "deterministic weights of " + e.getKey());
            }
        }
        assertTrue(checkpoint.size() >= meta.size(), "checkpoint has " + checkpoint.size() + " tensors");
    }
}
