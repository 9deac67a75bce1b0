package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.config.Limits;
import io.samstream.config.PromptSpec;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.config.StreamSpec;
import io.samstream.stream.track.ConceptPrompt;
import io.samstream.stream.track.StreamTracker;
import io.samstream.stream.track.TrackingState;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * SAM 3's concept ops on the prompts path: parsed and refused as the topic's other ops are, applied to a stream's
 * snapshots from their frame, held to the concept limits, carried across a failover with the prompts, and refused
 * for a model of the other kind.
 */
class ConceptPromptsTest {
    static final PromptSpec CONFIGURED = PromptSpec.ofConcepts(List.of("person"));

    private static PromptMessage msg(String json) throws PromptRejected {
        return PromptMessage.parse(null, json);
    }

    private static List<String> texts(StreamPrompts.Snapshot s) {
        return s.trackPrompts(100, 80).concepts().stream().map(ConceptPrompt::text).toList();
    }

    private static String reason(String json) {
        return assertThrows(PromptRejected.class, () -> msg(json)).reason();
    }

    @Test
    void conceptOpsParseWithTheirPhraseAndBoxesAndWriteBackTheSame() throws PromptRejected {
        PromptMessage m = msg("{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"  red forklift \",\"boxes\":"
                + "[[10,20,30,40],[1,1,5,5,0]],\"frame\":7}");
        assertEquals(PromptMessage.Op.CONCEPT, m.op());
        assertEquals("red forklift", m.concept().text());
        assertEquals(List.of(new ConceptPrompt.Box(10, 20, 30, 40, true), new ConceptPrompt.Box(1, 1, 5, 5, false)),
                m.concept().boxes());
        assertEquals(7, m.frame().getAsLong());
        assertEquals(m, msg(m.toJson()));
        PromptMessage r = msg("{\"stream\":\"dock\",\"op\":\"remove-concept\",\"text\":\"pallet\"}");
        assertEquals(PromptMessage.Op.REMOVE_CONCEPT, r.op());
        assertEquals("remove-concept", r.op().wireName());
        assertEquals(r, msg(r.toJson()));
    }

    @Test
    void badConceptOpsAreRejectedWithTheirReason() {
        assertEquals(PromptRejected.BAD_CONCEPT, reason("{\"stream\":\"s\",\"op\":\"concept\"}"));
        assertEquals(PromptRejected.BAD_CONCEPT, reason("{\"stream\":\"s\",\"op\":\"concept\",\"text\":\" \"}"));
        assertEquals(PromptRejected.BAD_CONCEPT, reason("{\"stream\":\"s\",\"op\":\"remove-concept\",\"text\":3}"));
        assertEquals(PromptRejected.BAD_CONCEPT, reason("{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"a\\u0007b\"}"));
        assertEquals(PromptRejected.BAD_CONCEPT, reason("{\"stream\":\"s\",\"op\":\"concept\",\"text\":\""
                + "x".repeat(1001) + "\"}"));
        assertEquals(PromptRejected.BAD_BOX, reason("{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"a\","
                + "\"boxes\":[[1,2,3]]}"));
        assertEquals(PromptRejected.BAD_BOX, reason("{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"a\","
                + "\"boxes\":[[5,5,1,1]]}"));
        assertEquals(PromptRejected.BAD_LABEL, reason("{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"a\","
                + "\"boxes\":[[1,1,5,5,2]]}"));
        assertEquals(PromptRejected.BAD_COORDINATE, reason("{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"a\","
                + "\"boxes\":[[-1,1,5,5]]}"));
        assertEquals(PromptRejected.BAD_BOX, reason("{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"a\",\"boxes\":"
                + "[" + "[1,1,5,5],".repeat(16) + "[1,1,5,5]]}"));
        String unknown = assertThrows(PromptRejected.class, () -> msg("{\"stream\":\"s\",\"op\":\"concepts\"}"))
                .getMessage();
        assertTrue(unknown.contains("concept or remove-concept"), unknown);
    }

    @Test
    void conceptsChangeFromTheirFrameAndAResetBringsBackTheConfiguredOnes() throws PromptRejected {
        StreamPrompts p = new StreamPrompts("dock", CONFIGURED);
        assertEquals(List.of("person"), texts(p.forFrame(0)));
        assertEquals(5, p.apply(msg("{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"forklift\"}"), 5, 100, 80));
        assertEquals(List.of("person"), texts(p.forFrame(4)));
        assertEquals(List.of("person", "forklift"), texts(p.forFrame(5)));
        p.apply(msg("{\"stream\":\"dock\",\"op\":\"remove-concept\",\"text\":\"person\",\"frame\":8}"), 6, 100, 80);
        assertEquals(List.of("person", "forklift"), texts(p.forFrame(7)));
        assertEquals(List.of("forklift"), texts(p.forFrame(8)));
        long generation = p.forFrame(8).generation();
        p.apply(msg("{\"stream\":\"dock\",\"op\":\"reset\"}"), 9, 100, 80);
        assertEquals(List.of("person"), texts(p.forFrame(9)));
        assertTrue(p.forFrame(9).generation() != generation, "a reset starts the tracks over");
        // Object changes and concept changes share the snapshots without losing each other.
        StreamPrompts q = new StreamPrompts("s", new PromptSpec(List.of(new ObjectPrompt(1, null,
                new double[] {1, 1, 9, 9})), 0, List.of("cup")));
        q.apply(msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":2,\"box\":[1,1,20,20]}"), 1, 100, 80);
        q.apply(msg("{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"plate\"}"), 2, 100, 80);
        q.apply(msg("{\"stream\":\"s\",\"op\":\"remove\",\"object\":1}"), 3, 100, 80);
        assertEquals(List.of(1, 2), q.forFrame(2).resolve(100, 80).stream().map(ObjectPrompt::id).toList());
        assertEquals(List.of("cup", "plate"), texts(q.forFrame(3)));
        assertEquals(List.of(2), q.forFrame(3).resolve(100, 80).stream().map(ObjectPrompt::id).toList());
    }

    @Test
    void conceptChangesAreHeldToTheLimitsAndTheFrame() throws PromptRejected {
        Limits two = new Limits(256, 1000, 100_000, 900 * 1024, 64 * 1024, 256 * 1024, 1_000_000_000_000L, 2, 10);
        StreamPrompts p = new StreamPrompts("dock", CONFIGURED, two);
        assertEquals(PromptRejected.CONCEPT_EXISTS, assertThrows(PromptRejected.class, () -> p.apply(
                msg("{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"person\"}"), 0, 100, 80)).reason());
        PromptRejected tooLong = assertThrows(PromptRejected.class, () -> p.apply(
                msg("{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"yellow forklift\"}"), 0, 100, 80));
        assertEquals(PromptRejected.BAD_CONCEPT, tooLong.reason());
        assertTrue(tooLong.getMessage().contains("samstream.limits.max-concept-chars = 10"), tooLong.getMessage());
        PromptRejected outside = assertThrows(PromptRejected.class, () -> p.apply(msg("{\"stream\":\"dock\","
                + "\"op\":\"concept\",\"text\":\"cup\",\"boxes\":[[10,10,120,20]]}"), 0, 100, 80));
        assertEquals(PromptRejected.OUTSIDE_FRAME, outside.reason());
        p.apply(msg("{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"cup\"}"), 0, 100, 80);
        PromptRejected third = assertThrows(PromptRejected.class, () -> p.apply(
                msg("{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"pallet\"}"), 0, 100, 80));
        assertEquals(PromptRejected.CONCEPT_LIMIT, third.reason());
        assertTrue(third.getMessage().contains("stream dock looks for 2 concepts, samstream.limits."
                + "max-concepts-per-stream = 2"), third.getMessage());
        PromptRejected unknown = assertThrows(PromptRejected.class, () -> p.apply(
                msg("{\"stream\":\"dock\",\"op\":\"remove-concept\",\"text\":\"pallet\"}"), 0, 100, 80));
        assertEquals(PromptRejected.UNKNOWN_CONCEPT, unknown.reason());
        assertTrue(unknown.getMessage().contains("[person, cup]"), unknown.getMessage());
        assertEquals(List.of("person", "cup"), texts(p.latest()), "refused changes leave the concepts as they were");
    }

    @Test
    void conceptsTravelWithThePromptsStateAndOldStatesReadAsTheConfiguredOnes() throws Exception {
        StreamPrompts p = new StreamPrompts("dock", CONFIGURED);
        p.apply(msg("{\"stream\":\"dock\",\"op\":\"concept\",\"text\":\"forklift\",\"boxes\":[[1,2,30,40,0]]}"), 3,
                100, 80);
        p.apply(msg("{\"stream\":\"dock\",\"op\":\"remove-concept\",\"text\":\"person\",\"frame\":20}"), 4, 100, 80);
        p.frameDone(9);
        String json = p.export(9).toJson().toString();
        PromptsState read = PromptsState.fromJson(new ObjectMapper().readTree(json));
        StreamPrompts q = new StreamPrompts("dock", CONFIGURED);
        q.restore(read);
        assertEquals(p.forFrame(10).trackPrompts(100, 80).concepts(), q.forFrame(10).trackPrompts(100, 80).concepts());
        assertEquals(List.of("forklift"), texts(q.forFrame(20)));
        assertEquals(List.of(new ConceptPrompt.Box(1, 2, 30, 40, false)),
                q.forFrame(10).trackPrompts(100, 80).concepts().get(1).boxes());
        // A stream whose concepts are the configured ones writes none; a state without the field reads so.
        StreamPrompts plain = new StreamPrompts("dock", CONFIGURED);
        String none = plain.export(0).toJson().toString();
        assertTrue(!none.contains("concepts"), none);
        assertNull(PromptsState.fromJson(new ObjectMapper().readTree(none)).steps().get(0).concepts());
        String bad = json.replace("\"forklift\"", "7");
        assertThrows(IllegalArgumentException.class, () -> PromptsState.fromJson(new ObjectMapper().readTree(bad)));
    }

    @Test
    void aModelOfTheOtherKindRefusesTheOpsAndDefinitions() throws PromptRejected {
        StreamTracker sam = tracker(false);
        StreamTracker sam3 = tracker(true);
        PromptMessage concept = msg("{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"cup\"}");
        PromptMessage add = msg("{\"stream\":\"s\",\"op\":\"add\",\"object\":2,\"box\":[1,1,20,20]}");
        PromptRejected e = assertThrows(PromptRejected.class, () -> ModelPrompts.check("s", concept, sam));
        assertEquals(PromptRejected.WRONG_MODEL, e.reason());
        assertTrue(e.getMessage().contains("needs a SAM 3 checkpoint"), e.getMessage());
        assertEquals(PromptRejected.WRONG_MODEL, assertThrows(PromptRejected.class,
                () -> ModelPrompts.check("s", add, sam3)).reason());
        ModelPrompts.check("s", concept, sam3);
        ModelPrompts.check("s", add, sam);
        ModelPrompts.check("s", msg("{\"stream\":\"s\",\"op\":\"reset\"}"), sam3);

        StreamSpec withConcepts = TestSources.spec("s", "testpattern:64x48@5", false, CONFIGURED);
        StreamSpec withGrid = TestSources.spec("g", "testpattern:64x48@5", false, new PromptSpec(List.of(), 2));
        assertTrue(ModelPrompts.misfit(withConcepts, false).contains("stream s: prompts.concepts needs a SAM 3"));
        assertTrue(ModelPrompts.misfit(withGrid, true).contains("stream g: prompts.grid"));
        assertNull(ModelPrompts.misfit(withConcepts, true));
        assertNull(ModelPrompts.misfit(withGrid, false));
    }

    private static StreamTracker tracker(boolean concepts) {
        return new StreamTracker() {
            @Override
            public void takeUp(TrackingState state) {}

            @Override
            public void keepStateEvery(int frames) {}

            @Override
            public Optional<TrackingState> takeState(long frame) {
                return Optional.empty();
            }

            @Override
            public Optional<TrackingState> stateAfter(long frame) {
                return Optional.empty();
            }

            @Override
            public boolean findsConcepts() {
                return concepts;
            }

            @Override
            public void close() {}
        };
    }
}
