package io.samstream.stream.engine;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.github.luben.zstd.Zstd;
import io.samstream.config.Limits;
import io.samstream.config.PromptSpec;
import io.samstream.config.StreamDefaults;
import io.samstream.config.StreamSpec;
import io.samstream.testkit.FuzzBounds;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Fuzz targets of the cluster's own topics (issue #31), through the validators the engine uses: a state-topic record
 * ({@link StateRecord#parse}) and a streams-topic record ({@link DefinitionRecord#parse}). The input is the record's
 * key, a newline, and its value; for states, a first byte {@code z} compresses the value with zstd as the engine
 * writes it (so that the JSON behind the decompression is fuzzed too). Each input parses, within the limits, or is a
 * {@link ControlRejected} whose logged text is one line, within {@link FuzzBounds}; a state that parses is also taken
 * up as a stream taking it over would (its prompts restored and exported again).
 */
class ControlRecordFuzzTest {
    private static final StreamDefaults DEFAULTS = new StreamDefaults(StreamSpec.Live.AUTO, StreamSpec.Decoder.AUTO,
            new PromptSpec(List.of(), 0));

    @FuzzTest(maxDuration = "10m")
    void stateRecord(byte[] input) {
        boolean zstd = input.length > 0 && input[0] == 'z';
        byte[] record = zstd ? Arrays.copyOfRange(input, 1, input.length) : input;
        int nl = indexOf(record, (byte) '\n');
        String key = nl < 0 ? "cam" : new String(record, 0, nl, StandardCharsets.UTF_8);
        byte[] json = nl < 0 ? record : Arrays.copyOfRange(record, nl + 1, record.length);
        byte[] value = zstd ? Zstd.compress(json) : json;
        FuzzBounds.check(() -> {
            try {
                StateRecord r = StateRecord.parse(key, value, Limits.DEFAULTS);
                if (r.frame() < -1 || r.frame() > Limits.DEFAULTS.maxStreamFrames() || !r.stream().equals(key)) {
                    throw new AssertionError("a state out of bounds passed: frame " + r.frame());
                }
                r.prompts().ifPresent(p -> {
                    StreamPrompts taken = new StreamPrompts(key, new PromptSpec(List.of(), 0));
                    taken.restore(p);
                    taken.export(Math.max(0, r.frame())).toJson();
                });
                return r;
            } catch (ControlRejected e) {
                oneLine(e);
                throw e;
            }
        }, ControlRejected.class);
    }

    @FuzzTest(maxDuration = "10m")
    void definitionRecord(byte[] record) {
        int nl = indexOf(record, (byte) '\n');
        String key = nl < 0 ? "cam" : new String(record, 0, nl, StandardCharsets.UTF_8);
        byte[] value = nl < 0 ? record : Arrays.copyOfRange(record, nl + 1, record.length);
        FuzzBounds.check(() -> {
            try {
                StreamSpec s = DefinitionRecord.parse(key, value, DEFAULTS, Limits.DEFAULTS);
                if (Limits.DEFAULTS.check(s) != null) {
                    throw new AssertionError("a definition past the limits passed: " + Limits.DEFAULTS.check(s));
                }
                return s;
            } catch (ControlRejected e) {
                oneLine(e);
                throw e;
            }
        }, ControlRejected.class);
    }

    /** What the engine logs of a rejection is one line ({@link ControlRejections}). */
    private static void oneLine(ControlRejected e) {
        String logged = LogSafe.of(e.getMessage(), ControlRejections.DETAIL_MAX_CHARS);
        if (logged.indexOf('\n') >= 0 || logged.indexOf('\r') >= 0 || e.reason().isEmpty()) {
            throw new AssertionError("a rejection logs on more than one line: " + logged);
        }
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
