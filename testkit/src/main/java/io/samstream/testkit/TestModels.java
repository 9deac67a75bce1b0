package io.samstream.testkit;

import java.nio.file.Path;

/**
 * The models tests run, by what they are rather than where they lie. The tiny ones (random weights, made
 * by tools/fixtures with Meta's code) are fast on two cores; the bundled demo models (trained on the test
 * pattern's scenes) give masks worth asserting on.
 */
public final class TestModels {
    private TestModels() {}

    /** The bundled SAM demo model ({@code examples/sam-demo-synthetic.pth}, what {@code samstream demo} runs). */
    public static Path demoSam() {
        return Fixtures.file("examples/sam-demo-synthetic.pth");
    }

    /** The bundled SAM 2.1 demo model ({@code examples/sam2-demo-synthetic.pt}). */
    public static Path demoSam2() {
        return Fixtures.file("examples/sam2-demo-synthetic.pt");
    }

    /** The tiny SAM (256 input) of gpu's fixtures. */
    public static Path tinySam() {
        return Fixtures.gpuFixture("tiny256/model.pth");
    }

    /** The tiny SAM's folder: the model and its reference cases (e.g. {@code landscape-shrink/}). */
    public static Path tinySamDir() {
        return Fixtures.gpuFixture("tiny256");
    }

    /** The tiny SAM 2.1 checkpoint of gpu's fixtures. */
    public static Path tinySam2() {
        return Fixtures.gpuFixture("sam2/tiny/checkpoint.pt");
    }

    /**
     * The BPE vocabulary the tiny SAM 3 tests use (gpu's fixtures; trained by tools/sam3_fixtures/train_test_vocab.py,
     * 814 ids): what a tiny SAM 3 checkpoint's text encoder embeds.
     */
    public static Path tinySam3Vocabulary() {
        return Fixtures.gpuFixture("sam3/tokenizer/test_bpe_vocab.txt.gz");
    }

    /** The tiny SAM 2.1's folder: the checkpoint and Meta's predictor's outputs on its frames. */
    public static Path tinySam2Dir() {
        return Fixtures.gpuFixture("sam2/tiny");
    }
}
