package io.samstream.gpu.sam3.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tokenizer against Meta's SimpleTokenizer: fixtures made by tools/sam3_fixtures/make_tokenizer_fixtures.py
 * (Meta's tokenizer_ve.py with ftfy and regex) over 140 phrases - ASCII, contractions, punctuation, accents, other
 * scripts, emoji, curly quotes, ligatures, full-width forms, controls, HTML references, mojibake, blank and long
 * texts - with samstream's test vocabulary (committed) and with SAM 3's official vocabulary (ids committed, the
 * vocabulary file is not: that test runs when {@code -Dsamstream.sam3.vocab=PATH} or SAMSTREAM_SAM3_VOCAB names
 * {@code bpe_simple_vocab_16e6.txt.gz}).
 */
class Sam3TokenizerTest {
    static final Path FIXTURES = Path.of("src/test/resources/fixtures/sam3/tokenizer");
    static final Path TEST_VOCAB = FIXTURES.resolve("test_bpe_vocab.txt.gz");

    @Test
    void testVocabularyMatchesMetaOnEveryPhrase() throws IOException {
        checkFixture(Sam3Tokenizer.load(TEST_VOCAB), FIXTURES.resolve("test_vocab_tokens.json"));
    }

    @Test
    void officialVocabularyMatchesMetaOnEveryPhrase() throws IOException {
        String where = System.getProperty("samstream.sam3.vocab", System.getenv("SAMSTREAM_SAM3_VOCAB"));
        Assumptions.assumeTrue(where != null && Files.isRegularFile(Path.of(where)),
                "SAM 3's vocabulary is not in the repository: set -Dsamstream.sam3.vocab=PATH or SAMSTREAM_SAM3_VOCAB"
                        + " to bpe_simple_vocab_16e6.txt.gz (Meta's sam3/assets) to run this test");
        Sam3Tokenizer tokenizer = Sam3Tokenizer.load(Path.of(where));
        assertEquals(49408, tokenizer.vocabularySize());
        checkFixture(tokenizer, FIXTURES.resolve("official_vocab_tokens.json"));
    }

    private static void checkFixture(Sam3Tokenizer tokenizer, Path fixture) throws IOException {
        JsonNode root = new ObjectMapper().readTree(fixture.toFile());
        assertEquals(root.get("vocab_size").asInt(), tokenizer.vocabularySize(), "vocabulary size");
        assertEquals(root.get("start").asInt(), tokenizer.startToken());
        assertEquals(root.get("end").asInt(), tokenizer.endToken());
        List<String> failures = new ArrayList<>();
        int cases = 0;
        for (JsonNode c : root.get("cases")) {
            cases++;
            String text = c.get("text").asText();
            String label = escape(text);
            String clean = TextCleaner.clean(text);
            if (!clean.equals(c.get("clean").asText())) {
                failures.add(label + ": cleaned to " + escape(clean) + ", Meta " + escape(c.get("clean").asText()));
                continue;
            }
            compare(failures, label + " encode", ints(c.get("encode")), tokenizer.encode(text));
            compare(failures, label + " at 32", ints(c.get("ids32")), tokenizer.tokenize(text, 32));
            compare(failures, label + " at 77", ints(c.get("ids77")), tokenizer.tokenize(text, 77));
        }
        assertTrue(cases >= 100, "fixture has " + cases + " phrases");
        assertTrue(failures.isEmpty(), failures.size() + " of " + cases + " phrases differ:\n"
                + String.join("\n", failures));
    }

    private static void compare(List<String> failures, String what, int[] expected, int[] actual) {
        if (!java.util.Arrays.equals(expected, actual)) {
            failures.add(what + ": " + java.util.Arrays.toString(actual) + ", Meta "
                    + java.util.Arrays.toString(expected));
        }
    }

    @Test
    void framesAndTruncatesAsTheModelReadsIt() {
        Sam3Tokenizer tokenizer = Sam3Tokenizer.load(TEST_VOCAB);
        int[] ids = tokenizer.tokenize("red circle", Sam3Tokenizer.SAM3_CONTEXT_LENGTH);
        assertEquals(Sam3Tokenizer.SAM3_CONTEXT_LENGTH, ids.length);
        assertEquals(tokenizer.startToken(), ids[0]);
        int[] body = tokenizer.encode("red circle");
        assertEquals(tokenizer.endToken(), ids[body.length + 1]);
        for (int i = body.length + 2; i < ids.length; i++) {
            assertEquals(0, ids[i], "padding at " + i);
        }
        int[] longIds = tokenizer.tokenize("red ".repeat(100), 8);
        assertEquals(tokenizer.startToken(), longIds[0]);
        assertEquals(tokenizer.endToken(), longIds[7]);
        assertArrayEquals(java.util.Arrays.copyOfRange(tokenizer.encode("red ".repeat(100)), 0, 6),
                java.util.Arrays.copyOfRange(longIds, 1, 7));
        assertEquals("red circle ", tokenizer.decode(body));
    }

    @Test
    void badInputsAreRefusedWithTheReason(@TempDir Path dir) throws IOException {
        Sam3Tokenizer tokenizer = Sam3Tokenizer.load(TEST_VOCAB);
        IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
                () -> tokenizer.encode("x".repeat(Sam3Tokenizer.MAX_TEXT_CHARS + 1)));
        assertTrue(tooLong.getMessage().contains("longer than"), tooLong.getMessage());
        assertThrows(IllegalArgumentException.class, () -> tokenizer.tokenize("red", 1));
        assertThrows(IllegalArgumentException.class, () -> tokenizer.decode(new int[] {tokenizer.vocabularySize()}));
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> Sam3Tokenizer.forCheckpoint(dir.resolve("sam3.pt")));
        assertTrue(missing.getMessage().contains(Sam3Tokenizer.VOCABULARY_FILE), missing.getMessage());
        Path empty = dir.resolve("empty.txt");
        Files.writeString(empty, "#version only");
        IllegalArgumentException noMerges = assertThrows(IllegalArgumentException.class,
                () -> Sam3Tokenizer.load(empty));
        assertTrue(noMerges.getMessage().contains("no merges"), noMerges.getMessage());
        Path binary = dir.resolve("binary.txt");
        Files.write(binary, new byte[] {'#', '\n', (byte) 0xFF, (byte) 0xFE});
        assertThrows(IllegalArgumentException.class, () -> Sam3Tokenizer.load(binary));
    }

    @Test
    void checkpointFolderVocabularyIsFound(@TempDir Path dir) throws IOException {
        Files.copy(TEST_VOCAB, dir.resolve(Sam3Tokenizer.VOCABULARY_FILE));
        Sam3Tokenizer tokenizer = Sam3Tokenizer.forCheckpoint(dir.resolve("sam3.pt"));
        assertEquals(814, tokenizer.vocabularySize());
        Path plain = dir.resolve("plain.txt");
        Files.write(plain, new String(new java.util.zip.GZIPInputStream(Files.newInputStream(TEST_VOCAB))
                .readAllBytes(), StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8));
        assertArrayEquals(tokenizer.tokenize("red circle", 32), Sam3Tokenizer.load(plain).tokenize("red circle", 32));
    }

    /** A checkpoint's own vocabulary ({@code demo.pt.vocab.txt.gz}) wins over the folder's Meta vocabulary. */
    @Test
    void aCheckpointsOwnVocabularyIsPreferred(@TempDir Path dir) throws IOException {
        Path folderVocab = dir.resolve(Sam3Tokenizer.VOCABULARY_FILE);
        Files.writeString(folderVocab, "#version: another\nr e\n");
        Path own = Sam3Tokenizer.ownVocabulary(dir.resolve("demo.pt"));
        assertEquals(dir.resolve("demo.pt.vocab.txt.gz").toAbsolutePath(), own);
        int folders = Sam3Tokenizer.load(folderVocab).vocabularySize();
        assertTrue(folders != 814);
        assertEquals(folders, Sam3Tokenizer.forCheckpoint(dir.resolve("demo.pt")).vocabularySize(), "the folder's");
        Files.copy(TEST_VOCAB, own);
        assertEquals(814, Sam3Tokenizer.forCheckpoint(dir.resolve("demo.pt")).vocabularySize(), "its own");
        assertEquals(folders, Sam3Tokenizer.forCheckpoint(dir.resolve("other.pt")).vocabularySize(), "not another's");
    }

    private static int[] ints(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asInt();
        }
        return out;
    }

    private static String escape(String s) {
        StringBuilder b = new StringBuilder("\"");
        s.codePoints().limit(60).forEach(cp -> {
            if (cp >= 0x20 && cp < 0x7F) {
                b.append((char) cp);
            } else {
                b.append(String.format("\\u{%X}", cp));
            }
        });
        return b.append(s.length() > 60 ? "...\"" : "\"").toString();
    }
}
