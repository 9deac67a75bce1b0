package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class StreamPromptsTest {
    static final PromptSpec CONFIGURED = new PromptSpec(
            List.of(new ObjectPrompt(1, new double[][] {{10, 10, 1}}, null)), 1);

    private static PromptMessage msg(String json) throws PromptRejected {
        return PromptMessage.parse(null, json);
    }

    private static List<Integer> ids(StreamPrompts.Snapshot s) {
        return s.resolve(100, 80).stream().map(ObjectPrompt::id).toList();
    }

    @Test
    void addUpdateRemoveResetFromTheNextFrame() throws PromptRejected {
        StreamPrompts p = new StreamPrompts("s", CONFIGURED);
        assertEquals(List.of(1, 1000), ids(p.forFrame(0)));
        assertEquals(5, p.apply(msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":2,\"box\":[1,1,20,20]}"), 5, 100, 80));
        assertEquals(List.of(1, 1000), ids(p.forFrame(4)), "frames before the change keep the old prompts");
        assertEquals(List.of(1, 1000, 2), ids(p.forFrame(5)));
        p.apply(msg("{\"stream\":\"s\",\"op\":\"update\",\"object\":1,\"box\":[0,0,9,9]}"), 6, 100, 80);
        ObjectPrompt updated = p.forFrame(6).resolve(100, 80).get(0);
        assertEquals(1, updated.id());
        assertEquals(9, updated.box()[2]);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":1000}"), 7, 100, 80);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":1}"), 7, 100, 80);
        assertEquals(List.of(2), ids(p.forFrame(7)));
        assertEquals(List.of(1, 1000, 2), ids(p.forFrame(6)));
        p.apply(msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[[3,3,1]]}"), 8, 100, 80);
        assertEquals(List.of(1, 2), ids(p.forFrame(8)), "a removed id can be added again");
        p.apply(msg("{\"stream\":\"s\",\"op\":\"reset\"}"), 9, 100, 80);
        assertEquals(List.of(1, 1000), ids(p.forFrame(9)));
        assertEquals(10, ((ObjectPrompt) p.forFrame(9).resolve(100, 80).get(0)).points()[0][0]);
    }

    /** What the tracker reseeds by: an object's revision changes with its add/update, every one with a reset. */
    @Test
    void revisionsChangeWithEachObjectsPromptAndGenerationsWithAReset() throws PromptRejected {
        StreamPrompts p = new StreamPrompts("s", CONFIGURED);
        StreamPrompts.Snapshot start = p.forFrame(0);
        assertEquals(0, start.generation());
        assertEquals(0, start.revision(1));
        assertEquals(0, start.revision(1000));
        p.apply(msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":2,\"box\":[1,1,20,20]}"), 1, 100, 80);
        StreamPrompts.Snapshot added = p.forFrame(1);
        assertEquals(0, added.revision(1), "others keep theirs");
        long r2 = added.revision(2);
        assertEquals(true, r2 > 0);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"update\",\"object\":2,\"box\":[1,1,20,20]}"), 2, 100, 80);
        assertEquals(true, p.forFrame(2).revision(2) > r2, "an update is a new prompt, even the same box");
        p.apply(msg("{\"stream\":\"s\",\"op\":\"update\",\"object\":1,\"box\":[0,0,9,9]}"), 3, 100, 80);
        assertEquals(true, p.forFrame(3).revision(1) > 0);
        assertEquals(0, p.forFrame(3).revision(1000));
        assertEquals(0, p.forFrame(3).generation());
        p.apply(msg("{\"stream\":\"s\",\"op\":\"reset\"}"), 4, 100, 80);
        StreamPrompts.Snapshot reset = p.forFrame(4);
        assertEquals(true, reset.generation() > p.forFrame(3).revision(1));
        assertEquals(reset.generation(), reset.revision(1));
        assertEquals(reset.generation(), reset.revision(1000));
        assertEquals(List.of(1, 1000), reset.trackPrompts(100, 80).objects().stream()
                .map(o -> o.prompt().id()).toList());
        assertEquals(reset.generation(), reset.trackPrompts(100, 80).generation());
    }

    @Test
    void aLaterFrameWaitsAndAPastOneAppliesNow() throws PromptRejected {
        StreamPrompts p = new StreamPrompts("s", CONFIGURED);
        assertEquals(20, p.apply(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":1,\"frame\":20}"), 3, 0, 0));
        assertEquals(List.of(1, 1000), ids(p.forFrame(19)));
        assertEquals(List.of(1000), ids(p.forFrame(20)));
        // Built on the pending change, so it cannot come before it.
        assertEquals(20, p.apply(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":1000,\"frame\":10}"), 3, 0, 0));
        assertEquals(List.of(), ids(p.forFrame(20)));
        StreamPrompts q = new StreamPrompts("s", CONFIGURED);
        assertEquals(50, q.apply(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":1,\"frame\":2}"), 50, 0, 0));
        q.frameDone(60);
        assertEquals(List.of(1000), ids(q.forFrame(61)));
    }

    /**
     * "Now" is the decoder's position, not the reader's: frames read but not yet decoded get a change, and a
     * change for a frame the decoder has not reached applies on exactly that frame.
     */
    @Test
    void aChangeAppliesFromTheFirstFrameNotYetDecoded() throws PromptRejected {
        StreamPrompts p = new StreamPrompts("s", CONFIGURED);
        for (long f = 0; f < 4; f++) {
            assertEquals(List.of(1, 1000), ids(p.take(f)));
        }
        assertEquals(4, p.decodeNext());
        // The source may have read frames 4..30 already: they are still to be decoded, so frame 4 gets it.
        assertEquals(4, p.applyNow(msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":2,\"box\":[1,1,20,20]}"),
                100, 80, id -> false));
        assertEquals(List.of(1, 1000, 2), ids(p.take(4)));
        // For frame 7, not yet decoded: exactly frame 7, not the next frame read.
        assertEquals(7, p.applyNow(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":2,\"frame\":7}"),
                100, 80, id -> false));
        assertEquals(List.of(1, 1000, 2), ids(p.take(5)));
        assertEquals(List.of(1, 1000, 2), ids(p.take(6)));
        assertEquals(List.of(1, 1000), ids(p.take(7)));
        // For a frame already decoded: from the next one to decode.
        assertEquals(8, p.applyNow(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":1,\"frame\":2}"),
                100, 80, id -> false));
        assertEquals(List.of(1000), ids(p.take(8)));
    }

    @Test
    void refusedChangesLeaveThePromptsAsTheyWere() throws PromptRejected {
        StreamPrompts p = new StreamPrompts("s", CONFIGURED);
        assertReason(PromptRejected.OBJECT_EXISTS, p, "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"box\":[0,0,5,5]}");
        assertReason(PromptRejected.OBJECT_EXISTS, p, "{\"stream\":\"s\",\"op\":\"add\",\"object\":1000,\"box\":[0,0,5,5]}");
        assertReason(PromptRejected.UNKNOWN_OBJECT, p, "{\"stream\":\"s\",\"op\":\"update\",\"object\":2,\"box\":[0,0,5,5]}");
        assertReason(PromptRejected.UNKNOWN_OBJECT, p, "{\"stream\":\"s\",\"op\":\"remove\",\"object\":2}");
        assertReason(PromptRejected.OUTSIDE_FRAME, p, "{\"stream\":\"s\",\"op\":\"add\",\"object\":2,\"box\":[0,0,500,5]}");
        assertEquals(List.of(1, 1000), ids(p.forFrame(100)));
    }

    @Test
    void aRunTimeObjectOutsideAFrameOfUnknownSizeIsLeftOutNotFatal() throws PromptRejected {
        StreamPrompts p = new StreamPrompts("s", CONFIGURED);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":2,\"points\":[[500,5,1]]}"), 0, 0, 0);
        assertEquals(List.of(1, 1000), ids(p.forFrame(0)));
    }

    /** A discovered object (the tracker's, ids from 1000000) can be removed while it is tracked, and only then. */
    @Test
    void aTrackedDiscoveredObjectCanBeRemoved() throws PromptRejected {
        StreamPrompts p = new StreamPrompts("s", CONFIGURED);
        String remove = "{\"stream\":\"s\",\"op\":\"remove\",\"object\":1000002}";
        PromptRejected e = assertThrows(PromptRejected.class,
                () -> p.apply(msg(remove), 3, 100, 80, id -> id == 1_000_001));
        assertEquals(PromptRejected.UNKNOWN_OBJECT, e.reason());
        assertEquals(java.util.Set.of(), p.forFrame(3).trackPrompts(100, 80).dismissed(), "refused: nothing changed");

        assertEquals(3, p.apply(msg(remove), 3, 100, 80, id -> id == 1_000_002));
        assertEquals(java.util.Set.of(), p.forFrame(2).trackPrompts(100, 80).dismissed());
        assertEquals(java.util.Set.of(1_000_002), p.forFrame(3).trackPrompts(100, 80).dismissed());
        assertEquals(List.of(1, 1000), ids(p.forFrame(3)), "the prompted objects stay");
        p.apply(msg("{\"stream\":\"s\",\"op\":\"reset\"}"), 4, 100, 80);
        assertEquals(java.util.Set.of(), p.forFrame(4).trackPrompts(100, 80).dismissed(), "a reset starts over");
    }

    /**
     * The flood: 10,000 adds, each for a frame to come. Pending changes are kept as changes, up to
     * MAX_PENDING snapshots; the rest are rejected with a reason naming the stream, in bounded time, and
     * every accepted one still resolves to the right objects. Once the frames are decoded, changes are taken again.
     */
    @Test
    @Timeout(30)
    void pendingChangesAreCappedPerStream() throws PromptRejected {
        // objects per stream raised past the adds: this test is about the pending changes
        StreamPrompts p = new StreamPrompts("s", CONFIGURED, new io.samstream.config.Limits(100_000,
                StreamPrompts.MAX_PENDING, 100_000, 900 * 1024, 64 * 1024, 256 * 1024, 1_000_000_000_000L));
        int accepted = 0;
        int rejected = 0;
        for (int i = 0; i < 10_000; i++) {
            try {
                p.apply(msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":" + (2000 + i)
                        + ",\"points\":[[1,1,1]],\"frame\":" + (100 + i) + "}"), 0, 100, 80);
                accepted++;
            } catch (PromptRejected e) {
                assertEquals(PromptRejected.TOO_MANY_PENDING, e.reason());
                assertTrue(e.getMessage().startsWith("stream s: 1000 prompt changes are pending already"), e.getMessage());
                rejected++;
            }
        }
        assertEquals(StreamPrompts.MAX_PENDING, accepted, "every pending change counts");
        assertEquals(10_000 - accepted, rejected);
        // Each pending snapshot has its own objects: the configured ones and the adds up to its frame.
        assertEquals(2, p.forFrame(99).ids().size());
        assertEquals(2 + 1, p.forFrame(100).ids().size());
        assertEquals(2 + 500, p.forFrame(599).ids().size());
        assertEquals(2 + accepted, p.latest().ids().size());
        assertEquals(accepted, p.latest().revision(2000 + accepted - 1));
        // A change deferred to the last pending frame counts too (issue #31 finding 3): rejected.
        assertEquals(PromptRejected.TOO_MANY_PENDING, assertThrows(PromptRejected.class, () -> p.apply(
                msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":2000}"), 0, 100, 80)).reason());
        assertEquals(2 + accepted, p.latest().ids().size());
        // Frames decoded: their snapshots go, and room is made.
        p.frameDone(100 + 500);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":2001,\"frame\":5000}"), 601, 100, 80);
        assertEquals(false, p.forFrame(5000).ids().contains(2001));
        assertEquals(true, p.forFrame(4999).ids().contains(2001));
    }

    /**
     * Failover (issue #17): what one engine exports after a frame, through the state topic's JSON, gives the
     * next engine the same prompts from the next frame on (pending changes at their frames), with the same
     * revisions (so its tracker does not seed again), and its own changes after that get new revisions.
     */
    @Test
    void promptsInForceAndPendingSurviveAMoveToAnotherEngine() throws Exception {
        StreamPrompts p = new StreamPrompts("s", CONFIGURED);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":2,\"box\":[1,1,20,20]}"), 3, 100, 80);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"update\",\"object\":1,\"points\":[[5,6,1],[7,8,0]]}"), 4, 100, 80);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":1000}"), 4, 100, 80);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":1000003}"), 5, 100, 80, id -> id == 1000003);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":3,\"points\":[[9,9]],\"frame\":20}"), 6, 100, 80);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":2,\"frame\":30}"), 6, 100, 80);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":2,\"points\":[[4,4]],\"frame\":30}"), 6, 100, 80);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"reset\",\"frame\":40}"), 6, 100, 80);
        p.apply(msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":4,\"box\":[2,2,8,8],\"frame\":41}"), 6, 100, 80);
        p.frameDone(9);

        PromptsState exported = p.export(9);
        String json = exported.toJson().toString();
        PromptsState read = PromptsState.fromJson(new com.fasterxml.jackson.databind.ObjectMapper().readTree(json));
        assertEquals(5, read.steps().size(), json);
        StreamPrompts q = new StreamPrompts("s", CONFIGURED);
        q.restore(read);
        for (long f : new long[] {10, 19, 20, 29, 30, 39, 40, 41, 60}) {
            StreamPrompts.Snapshot a = p.forFrame(f);
            StreamPrompts.Snapshot b = q.forFrame(f);
            assertEquals(ids(a), ids(b), "frame " + f);
            assertEquals(a.generation(), b.generation(), "frame " + f);
            for (int id : a.ids()) {
                assertEquals(a.revision(id), b.revision(id), "frame " + f + ", object " + id);
            }
            assertEquals(a.trackPrompts(100, 80).dismissed(), b.trackPrompts(100, 80).dismissed(), "frame " + f);
            List<ObjectPrompt> pa = a.resolve(100, 80);
            List<ObjectPrompt> pb = b.resolve(100, 80);
            for (int i = 0; i < pa.size(); i++) {
                assertTrue(java.util.Arrays.deepEquals(pa.get(i).points(), pb.get(i).points()), "frame " + f);
                assertTrue(java.util.Arrays.equals(pa.get(i).box(), pb.get(i).box()), "frame " + f);
            }
        }
        assertEquals(List.of(1, 2), ids(q.forFrame(10)));
        assertEquals(List.of(1, 3, 2), ids(q.forFrame(30)), "removed and added again: last");
        assertEquals(Set.of(1000003), q.forFrame(10).trackPrompts(100, 80).dismissed());
        // The next change on the new engine: checked against what it took up, with a revision not used before.
        assertReason(PromptRejected.OBJECT_EXISTS, q, "{\"stream\":\"s\",\"op\":\"add\",\"object\":4,\"box\":[1,1,5,5]}");
        q.apply(msg("{\"stream\":\"s\",\"op\":\"update\",\"object\":4,\"box\":[1,1,5,5]}"), 50, 100, 80);
        long newest = q.forFrame(50).revision(4);
        assertTrue(newest > exported.changes(), "revision " + newest + " after " + exported.changes());
    }

    @Test
    void aDamagedPromptsStateIsRefusedWithWhatIsWrong() {
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        for (String bad : List.of("{}", "{\"changes\":1,\"steps\":[]}",
                "{\"changes\":1,\"steps\":[{\"from\":0,\"generation\":0,\"diff\":true,\"set\":[],\"unset\":[],\"removed\":[],\"unremoved\":[]}]}",
                "{\"changes\":1,\"steps\":[{\"from\":0,\"generation\":0,\"diff\":false,\"set\":[{\"id\":5,\"revision\":1}],\"unset\":[],\"removed\":[],\"unremoved\":[]}]}")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> PromptsState.fromJson(json.readTree(bad)), bad);
            assertTrue(e.getMessage().startsWith("unreadable prompts state: "), e.getMessage());
        }
    }

    private static void assertReason(String reason, StreamPrompts p, String json) {
        PromptRejected e = assertThrows(PromptRejected.class, () -> p.apply(msg(json), 1, 100, 80));
        assertEquals(reason, e.reason());
    }
}
