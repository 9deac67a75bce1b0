package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.config.Limits;
import io.samstream.config.PromptSpec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The state topic's one validator: findings 1, 2 and 5 of issue #31 ({@code "frame": -5}, {@code "frame": 2^63-2},
 * a state claiming 3000 or 150,000 tracks) are rejected with their reason before anything acts on them; the
 * engine's own states, compressed, read back whole.
 */
class StateRecordTest {
    static final ObjectMapper JSON = new ObjectMapper();

    static ObjectNode state(String stream, long frame) {
        ObjectNode o = JSON.createObjectNode();
        o.put("stream", stream).put("engine", "e2").put("definition", "1a2b-40").put("frame", frame).put("pts_ms", 40)
                .put("ended", false).put("prompts_offset", -1);
        return o;
    }

    private static String reject(ObjectNode o) {
        return reject(o.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static String reject(byte[] value) {
        ControlRejected e = assertThrows(ControlRejected.class, () -> StateRecord.parse("cam", value, Limits.DEFAULTS));
        return e.reason() + ": " + e.getMessage();
    }

    @Test
    void negativeAndHugeFramesAreRejected() {
        assertEquals("bad_frame: \"frame\" is -5, outside [-1, 1000000000000] (samstream.limits.max-stream-frames)",
                reject(state("cam", -5)));
        assertEquals("bad_frame: \"frame\" is 9223372036854775806, outside [-1, 1000000000000]"
                + " (samstream.limits.max-stream-frames)", reject(state("cam", Long.MAX_VALUE - 1)));
    }

    @Test
    void statesClaimingThousandsOfTracksAreRejected() throws Exception {
        for (int n : new int[] {3000, 150_000}) {
            ObjectNode o = state("cam", 10);
            ObjectNode t = o.putObject("tracker");
            t.put("frame", 10).put("generation", 0).put("frames_tracked", 10).put("discovered", 0).putObject("ended");
            ArrayNode tracks = t.putArray("tracks");
            for (int i = 0; i < n; i++) {
                tracks.addObject().put("id", i);
            }
            assertEquals("too_many_objects: " + n + " tracks, more than samstream.limits.max-objects-per-stream = 256",
                    reject(StateRecord.encode(o)));
        }
    }

    @Test
    void promptsStatesAreHeldToTheLimitsToo() throws Exception {
        StreamPrompts p = new StreamPrompts("cam", new PromptSpec(List.of(), 0));
        for (int i = 0; i < 5; i++) {
            p.apply(PromptMessage.parse(null, "{\"stream\":\"cam\",\"op\":\"add\",\"object\":" + i
                    + ",\"box\":[1,1,9,9],\"frame\":" + (20 + i) + "}"), 11, 100, 80);
        }
        ObjectNode o = state("cam", 10);
        o.set("prompts", p.export(10).toJson());
        StateRecord r = StateRecord.parse("cam", StateRecord.encode(o), Limits.DEFAULTS);
        assertEquals(6, r.prompts().orElseThrow().steps().size());
        assertEquals(10, r.frame());
        Limits two = new Limits(256, 2, 100_000, 900 * 1024, 64 * 1024, 256 * 1024, 1_000_000_000_000L);
        ControlRejected e = assertThrows(ControlRejected.class,
                () -> StateRecord.parse("cam", StateRecord.encode(o), two));
        assertEquals(ControlRejected.TOO_MANY_PENDING, e.reason());
        ((ObjectNode) o.get("prompts").get("steps").get(1)).put("from", -3);
        assertTrue(reject(o).startsWith("bad_frame: prompts: a snapshot's \"from\" is -3"), reject(o));
    }

    @Test
    void theRecordIsCheckedWhole() throws Exception {
        assertEquals("bad_key: the value is the state of stream 'other', not of its key's", reject(state("other", 3)));
        assertTrue(reject("{\"stream\":\"cam\"} garbage".getBytes(StandardCharsets.UTF_8)).startsWith("malformed: not JSON"));
        assertEquals("malformed: the value is not a JSON object", reject("[]".getBytes(StandardCharsets.UTF_8)));
        ObjectNode noEnded = state("cam", 3);
        noEnded.remove("ended");
        assertEquals("malformed: \"ended\" must be true or false", reject(noEnded));
        ObjectNode badPrompts = state("cam", 3);
        badPrompts.putObject("prompts").put("changes", 1).putArray("steps").addObject().put("from", 0)
                .put("generation", 0).put("diff", false).putArray("set").addObject().put("id", 3).put("revision", 1);
        assertTrue(reject(badPrompts).startsWith("malformed: prompts: "), reject(badPrompts));
        byte[] big = new byte[Limits.DEFAULTS.maxStateBytes() + 1];
        assertEquals("too_large: the value has 921601 bytes, more than samstream.limits.max-state-bytes = 921600",
                reject(big));
        byte[] notZstd = {(byte) 0x28, (byte) 0xB5, (byte) 0x2F, (byte) 0xFD, 1, 2, 3};
        assertTrue(reject(notZstd).startsWith("malformed: not a zstd frame"), reject(notZstd));
        ControlRejected key = assertThrows(ControlRejected.class,
                () -> StateRecord.parse("a\nb", new byte[] {'{', '}'}, Limits.DEFAULTS));
        assertEquals(ControlRejected.BAD_KEY, key.reason());
    }

    /** The flood: 20,000 adds made a 2.7 MB state. The most a stream can hold now, compressed, fits. */
    @Test
    void aFullStreamsPromptsStateFitsCompressed() throws Exception {
        StreamPrompts p = new StreamPrompts("cam", new PromptSpec(List.of(), 0));
        int accepted = 0;
        StringBuilder points = new StringBuilder();
        java.util.Random random = new java.util.Random(31);
        for (int i = 0; i < 20_000; i++) {
            points.setLength(0);
            for (int k = 0; k < 62; k++) { // distinct coordinates: no help from repeats
                points.append(k == 0 ? "" : ",").append("[").append(random.nextDouble() * 1920).append(",")
                        .append(random.nextDouble() * 1080).append(",1]");
            }
            try {
                p.apply(PromptMessage.parse(null, "{\"stream\":\"cam\",\"op\":\"add\",\"object\":" + i + ",\"points\":["
                        + points + "]}"), 0, 0, 0);
                accepted++;
            } catch (PromptRejected e) {
                assertEquals(PromptRejected.OBJECT_LIMIT, e.reason());
            }
        }
        assertEquals(256, accepted);
        ObjectNode o = state("cam", -1);
        o.set("prompts", p.export(-1).toJson());
        int raw = JSON.writeValueAsBytes(o).length;
        byte[] value = StateRecord.encode(o);
        System.out.printf("state of 256 objects of 62 points: %d bytes JSON, %d bytes zstd%n", raw, value.length);
        assertTrue(value.length < Limits.DEFAULTS.maxStateBytes(), value.length + " bytes");
        assertEquals(256, StateRecord.parse("cam", value, Limits.DEFAULTS).prompts().orElseThrow().steps().get(0)
                .changed().size());
    }
}
