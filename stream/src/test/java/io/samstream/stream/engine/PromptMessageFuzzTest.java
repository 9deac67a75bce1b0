package io.samstream.stream.engine;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.samstream.testkit.FuzzBounds;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Fuzz target of prompts-topic messages: the input is the record's key, a newline, and its value; it
 * parses or is a {@link PromptRejected} with its reason, within {@link FuzzBounds}. A rejection's text
 * goes to the log through {@link LogSafe}, so it must come out as one line there too.
 */
class PromptMessageFuzzTest {
    @FuzzTest(maxDuration = "10m")
    void promptMessage(byte[] record) {
        int nl = indexOf(record, (byte) '\n');
        String key = nl < 0 ? null : new String(record, 0, nl, StandardCharsets.UTF_8);
        byte[] value = nl < 0 ? record : Arrays.copyOfRange(record, nl + 1, record.length);
        FuzzBounds.check(() -> {
            try {
                return PromptMessage.parse(key, value);
            } catch (PromptRejected e) {
                String logged = LogSafe.of(e.getMessage());
                if (logged.indexOf('\n') >= 0 || logged.indexOf('\r') >= 0) {
                    throw new AssertionError("a rejection logs on more than one line: " + logged);
                }
                throw e;
            }
        }, PromptRejected.class);
    }

    private static int indexOf(byte[] bytes, byte b) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
