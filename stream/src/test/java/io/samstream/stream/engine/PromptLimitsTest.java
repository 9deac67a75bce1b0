package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.Limits;
import io.samstream.config.PromptSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Finding 3 of issue #31: one prompt with {@code "frame": 9223372036854775807} froze a stream's prompt control (every
 * later change deferred behind it, and 25,000 more adds all accepted: too_many_pending never triggered). Now such a
 * frame is rejected {@code frame_too_far}, a change deferred behind a pending one counts against
 * {@code max-pending-changes}, and adds stop at {@code max-objects-per-stream}.
 */
class PromptLimitsTest {
    static final PromptSpec NONE = new PromptSpec(List.of(), 0);

    private static PromptMessage add(int id, String frame) throws PromptRejected {
        return PromptMessage.parse(null, "{\"stream\":\"s\",\"op\":\"add\",\"object\":" + id + ",\"box\":[1,1,9,9]"
                + (frame == null ? "" : ",\"frame\":" + frame) + "}");
    }

    @Test
    void aFrameFurtherAheadThanTheLimitIsRejected() throws PromptRejected {
        StreamPrompts p = new StreamPrompts("s", NONE);
        PromptRejected e = assertThrows(PromptRejected.class, () -> p.apply(add(1, "9223372036854775807"), 10, 100, 80));
        assertEquals(PromptRejected.FRAME_TOO_FAR, e.reason());
        assertEquals("stream s: frame 9223372036854775807 is more than samstream.limits.max-prompt-frame-ahead = 100000"
                + " frames after the next one (10)", e.getMessage());
        assertEquals(PromptRejected.FRAME_TOO_FAR, assertThrows(PromptRejected.class,
                () -> p.apply(add(1, "100011"), 10, 100, 80)).reason());
        assertEquals(100_010, p.apply(add(1, "100010"), 10, 100, 80), "the limit itself is allowed");
    }

    @Test
    void changesDeferredBehindAPendingOneCountAgainstTheLimit() throws PromptRejected {
        Limits limits = new Limits(100_000, 1000, 100_000, 900 * 1024, 64 * 1024, 256 * 1024, 1_000_000_000_000L);
        StreamPrompts p = new StreamPrompts("s", NONE, limits);
        assertEquals(100_000, p.apply(add(0, "100000"), 0, 100, 80));
        int accepted = 1;
        int pending = 0;
        for (int id = 1; id <= 25_000; id++) {
            try {
                assertEquals(100_000, p.apply(add(id, null), 0, 100, 80), "deferred behind the pending change");
                accepted++;
            } catch (PromptRejected e) {
                assertEquals(PromptRejected.TOO_MANY_PENDING, e.reason(), e.getMessage());
                pending++;
            }
        }
        assertEquals(1000, accepted, "at most max-pending-changes wait");
        assertEquals(24_001, pending);
        // once their frame is decoded, they are in force and new changes are taken again
        p.take(100_000);
        p.frameDone(100_000);
        assertEquals(100_001, p.apply(add(30_000, null), 100_001, 100, 80));
    }

    @Test
    void addsStopAtTheObjectLimit() throws PromptRejected {
        StreamPrompts p = new StreamPrompts("s", new PromptSpec(List.of(), 4)); // 16 grid objects
        int accepted = 0;
        PromptRejected last = null;
        for (int id = 0; id < 20_000; id++) {
            try {
                p.apply(add(id, null), id, 100, 80);
                p.take(id);
                p.frameDone(id);
                accepted++;
            } catch (PromptRejected e) {
                last = e;
            }
        }
        assertEquals(256 - 16, accepted);
        assertEquals(PromptRejected.OBJECT_LIMIT, last.reason());
        assertEquals("stream s has 256 objects, samstream.limits.max-objects-per-stream = 256 (remove one first)",
                last.getMessage());
        assertTrue(p.latest().ids().size() <= 256);
    }
}
