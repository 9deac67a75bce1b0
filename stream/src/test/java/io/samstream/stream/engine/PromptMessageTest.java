package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.PromptSpec.ObjectPrompt;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class PromptMessageTest {

    @Test
    void parsesEveryOp() throws PromptRejected {
        PromptMessage add = PromptMessage.parse("cam-1", "{\"stream\":\"cam-1\",\"op\":\"add\",\"object\":3,"
                + "\"points\":[[10,20,1],[5.5,6,0],[7,8]],\"box\":[1,2,30,40],\"frame\":12,\"extra\":{\"x\":1}}");
        assertEquals("cam-1", add.stream());
        assertEquals(PromptMessage.Op.ADD, add.op());
        assertEquals(3, add.object());
        assertEquals(OptionalLong.of(12), add.frame());
        assertArrayEquals(new double[] {5.5, 6, 0}, add.prompt().points()[1]);
        assertArrayEquals(new double[] {7, 8, 1}, add.prompt().points()[2], "the label defaults to 1");
        assertArrayEquals(new double[] {1, 2, 30, 40}, add.prompt().box());

        PromptMessage update = PromptMessage.parse(null, "{\"stream\":\"s\",\"op\":\"update\",\"object\":0,\"box\":[0,0,1,1]}");
        assertEquals(PromptMessage.Op.UPDATE, update.op());
        assertNull(update.prompt().points());
        assertEquals(OptionalLong.empty(), update.frame(), "no frame: now");

        PromptMessage remove = PromptMessage.parse("s", "{\"stream\":\"s\",\"op\":\"remove\",\"object\":9}");
        assertEquals(9, remove.object());
        assertNull(remove.prompt());

        PromptMessage removeDiscovered = PromptMessage.parse("s", "{\"stream\":\"s\",\"op\":\"remove\",\"object\":1000002}");
        assertEquals(1_000_002, removeDiscovered.object(), "discovered objects can be removed");

        PromptMessage reset = PromptMessage.parse("s", "{\"stream\":\"s\",\"op\":\"reset\",\"frame\":null}"
                .getBytes(StandardCharsets.UTF_8));
        assertEquals(PromptMessage.Op.RESET, reset.op());
    }

    @Test
    void everyRejectionHasItsReason() {
        rejected(PromptRejected.MALFORMED_JSON, "s", "{\"stream\":");
        rejected(PromptRejected.MALFORMED_JSON, "s", "[1,2]");
        rejected(PromptRejected.MALFORMED_JSON, "s", "");
        rejected(PromptRejected.UNKNOWN_OP, "s", "{\"stream\":\"s\",\"op\":\"move\",\"object\":1}");
        rejected(PromptRejected.UNKNOWN_OP, "s", "{\"stream\":\"s\",\"object\":1}");
        rejected(PromptRejected.UNKNOWN_OP, "s", "{\"stream\":\"s\",\"op\":\"ADD\",\"object\":1,\"box\":[0,0,1,1]}");
        rejected(PromptRejected.MISSING_STREAM, "s", "{\"op\":\"reset\"}");
        rejected(PromptRejected.MISSING_STREAM, null, "{\"stream\":7,\"op\":\"reset\"}");
        rejected(PromptRejected.KEY_MISMATCH, "other", "{\"stream\":\"s\",\"op\":\"reset\"}");
        rejected(PromptRejected.MISSING_OBJECT, "s", "{\"stream\":\"s\",\"op\":\"remove\"}");
        rejected(PromptRejected.MISSING_OBJECT, "s", "{\"stream\":\"s\",\"op\":\"remove\",\"object\":-1}");
        rejected(PromptRejected.MISSING_OBJECT, "s", "{\"stream\":\"s\",\"op\":\"remove\",\"object\":\"a\"}");
        rejected(PromptRejected.MISSING_PROMPT, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1}");
        rejected(PromptRejected.MISSING_OBJECT, "s",
                "{\"stream\":\"s\",\"op\":\"add\",\"object\":1000000,\"box\":[0,0,1,1]}");
        rejected(PromptRejected.MISSING_OBJECT, "s",
                "{\"stream\":\"s\",\"op\":\"update\",\"object\":1000001,\"box\":[0,0,1,1]}");
        rejected(PromptRejected.MISSING_PROMPT, "s", "{\"stream\":\"s\",\"op\":\"update\",\"object\":1,\"points\":[]}");
        rejected(PromptRejected.BAD_POINT, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[[1]]}");
        rejected(PromptRejected.BAD_POINT, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[1,2]}");
        rejected(PromptRejected.BAD_LABEL, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[[1,2,2]]}");
        rejected(PromptRejected.BAD_LABEL, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[[1,2,\"1\"]]}");
        rejected(PromptRejected.BAD_COORDINATE, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[[-1,2,1]]}");
        rejected(PromptRejected.BAD_COORDINATE, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[[1e999,2,1]]}");
        rejected(PromptRejected.BAD_COORDINATE, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[[\"NaN\",2,1]]}");
        rejected(PromptRejected.BAD_COORDINATE, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"box\":[0,-3,4,4]}");
        rejected(PromptRejected.BAD_BOX, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"box\":[10,0,5,4]}");
        rejected(PromptRejected.BAD_BOX, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"box\":[0,10,5,4]}");
        rejected(PromptRejected.BAD_BOX, "s", "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"box\":[0,0,5]}");
        rejected(PromptRejected.BAD_FRAME, "s", "{\"stream\":\"s\",\"op\":\"reset\",\"frame\":-1}");
        rejected(PromptRejected.BAD_FRAME, "s", "{\"stream\":\"s\",\"op\":\"reset\",\"frame\":\"now\"}");
        PromptRejected tomb = assertThrows(PromptRejected.class, () -> PromptMessage.parse("s", (byte[]) null));
        assertEquals(PromptRejected.MALFORMED_JSON, tomb.reason());
    }

    @Test
    void tooManyPointsAreRejectedNamingTheObject() throws PromptRejected {
        String ok = "{\"stream\":\"s\",\"op\":\"add\",\"object\":5,\"points\":" + points(ObjectPrompt.MAX_POINTS)
                + ",\"box\":[0,0,9,9]}";
        assertEquals(ObjectPrompt.MAX_POINTS, PromptMessage.parse("s", ok).prompt().points().length);
        PromptRejected e = assertThrows(PromptRejected.class, () -> PromptMessage.parse("s",
                "{\"stream\":\"s\",\"op\":\"update\",\"object\":5,\"points\":" + points(ObjectPrompt.MAX_POINTS + 1) + "}"));
        assertEquals(PromptRejected.TOO_MANY_POINTS, e.reason());
        assertEquals("update of object 5 has 63 points, at most 62 are allowed", e.getMessage());
        // The configuration's objects have the same bound.
        IllegalArgumentException c = assertThrows(IllegalArgumentException.class,
                () -> new ObjectPrompt(7, new double[ObjectPrompt.MAX_POINTS + 1][], null));
        assertTrue(c.getMessage().startsWith("object 7 has 63 points"), c.getMessage());
    }

    @Test
    @Timeout(10)
    void aMessageOverTheSizeLimitIsRejectedBeforeParsing() {
        // The 272 KB message with 20,000 points: rejected on its size, the points are never read.
        String huge = "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":" + points(20_000) + "}";
        byte[] bytes = huge.getBytes(StandardCharsets.UTF_8);
        assertTrue(bytes.length > PromptMessage.MAX_BYTES);
        long t0 = System.nanoTime();
        PromptRejected e = assertThrows(PromptRejected.class, () -> PromptMessage.parse("s", bytes));
        assertTrue(System.nanoTime() - t0 < 1_000_000_000L, "rejected at once");
        assertEquals(PromptRejected.TOO_LARGE, e.reason());
        assertEquals("the message has " + bytes.length + " bytes, at most 65536 bytes are read"
                + " (samstream.limits.max-prompt-bytes)", e.getMessage());
        assertEquals(PromptRejected.TOO_LARGE,
                assertThrows(PromptRejected.class, () -> PromptMessage.parse("s", huge)).reason());
    }

    private static String points(int n) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < n; i++) {
            b.append(i == 0 ? "" : ",").append("[").append(i % 9).append(",").append(i % 7).append(",1]");
        }
        return b.append("]").toString();
    }

    private static void rejected(String reason, String key, String json) {
        PromptRejected e = assertThrows(PromptRejected.class, () -> PromptMessage.parse(key, json), json);
        assertEquals(reason, e.reason(), json + ": " + e.getMessage());
        assertTrue(!e.getMessage().isBlank());
    }
}
