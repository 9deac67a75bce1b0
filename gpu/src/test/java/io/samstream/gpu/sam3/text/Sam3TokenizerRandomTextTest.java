package io.samstream.gpu.sam3.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Prompts come from users (the HTTP API, the prompts topic): any string within the length limit - controls, lone
 * surrogates, unassigned code points, markup - tokenizes without an error into ids of the vocabulary, framed at
 * the context length.
 */
class Sam3TokenizerRandomTextTest {
    private static final int[][] RANGES = {
        {0x00, 0x7F}, {0x80, 0x2FF}, {0x2000, 0x206F}, {0x3000, 0x30FF}, {0x4E00, 0x4EFF}, {0xD800, 0xDFFF},
        {0xFB00, 0xFB4F}, {0xFE00, 0xFFFF}, {0x1F300, 0x1F6FF}, {0xE0000, 0xE007F},
    };

    @Test
    void anyTextTokenizesIntoVocabularyIds() {
        Sam3Tokenizer tokenizer = Sam3Tokenizer.load(Sam3TokenizerTest.TEST_VOCAB);
        SplittableRandom random = new SplittableRandom(33);
        String[] pieces = {"&amp;", "&#", "&#x1F600;", "<b>", "\r\n", "'s", "<start_of_text>", "Ã©", "\u001b[1m"};
        for (int round = 0; round < 400; round++) {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(60);
            for (int i = 0; i < length; i++) {
                if (random.nextInt(8) == 0) {
                    text.append(pieces[random.nextInt(pieces.length)]);
                } else {
                    int[] r = RANGES[random.nextInt(RANGES.length)];
                    text.appendCodePoint(r[0] + random.nextInt(r[1] - r[0] + 1));
                }
            }
            int[] ids = tokenizer.tokenize(text.toString(), Sam3Tokenizer.SAM3_CONTEXT_LENGTH);
            assertEquals(Sam3Tokenizer.SAM3_CONTEXT_LENGTH, ids.length);
            assertEquals(tokenizer.startToken(), ids[0]);
            int end = -1;
            for (int i = 1; i < ids.length; i++) {
                assertTrue(ids[i] >= 0 && ids[i] < tokenizer.vocabularySize(), "id " + ids[i]);
                if (ids[i] == tokenizer.endToken() && end < 0) {
                    end = i;
                }
            }
            assertTrue(end > 0, "no end token in " + java.util.Arrays.toString(ids));
            for (int i = end + 1; i < ids.length; i++) {
                assertEquals(0, ids[i], "padding after the end token");
            }
        }
    }
}
