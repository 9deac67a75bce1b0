package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LogSafeTest {

    @Test
    void escapesControlCharactersSoNoValueForgesALogLine() {
        String forged = LogSafe.of("x\n07:00:00 ERROR StreamHandle - stream s2 failed: FORGED BY KEY\r\u0000\u2028\\");
        assertFalse(forged.chars().anyMatch(c -> c < 0x20 || c == 0x2028), forged);
        assertEquals("x\\n07:00:00 ERROR StreamHandle - stream s2 failed: FORGED BY KEY\\r\\u0000\\u2028\\", forged);
        assertEquals(forged, LogSafe.of(forged), "safe text stays as it is");
        assertEquals("cam-1", LogSafe.of("cam-1"));
        assertEquals("null", LogSafe.of(null));
    }

    @Test
    void cutsLongValuesWithTheirLength() {
        String s = LogSafe.of("k".repeat(1_600_000));
        assertTrue(s.length() < LogSafe.MAX_CHARS + 30, s.length() + "");
        assertTrue(s.endsWith("... (1600000 chars)"), s.substring(s.length() - 30));
        assertEquals("ab... (3 chars)", LogSafe.of("abc", 2));
    }

    @Test
    void rejectionDetailsQuoteTheMessageSafely() {
        PromptRejected e = org.junit.jupiter.api.Assertions.assertThrows(PromptRejected.class,
                () -> PromptMessage.parse("s\nERROR forged" + "k".repeat(5000), "{\"stream\":\"s\",\"op\":\"reset\"}"));
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().length() < 400, e.getMessage().length() + "");
        assertTrue(e.getMessage().contains("(5014 chars)"), e.getMessage());
    }
}
