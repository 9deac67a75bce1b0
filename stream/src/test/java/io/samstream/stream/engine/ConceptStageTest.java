package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How ConceptStage spreads a micro-batch's streams over its lanes (the stepping itself: ConceptEngineTest). */
class ConceptStageTest {
    @Test
    void aStreamsFramesStayInOneLaneInOrderAndStreamsTakeTheLanesInTurn() {
        Object a = new Object(), b = new Object(), c = new Object(), d = new Object(), e = new Object();
        // frames of streams a b a c d e b: a, b, c, d take lanes 0 to 3, e wraps round to lane 0
        assertEquals(List.of(List.of(0, 2, 5), List.of(1, 6), List.of(3), List.of(4)),
                ConceptStage.lanes(List.of(a, b, a, c, d, e, b), 4));
        assertEquals(List.of(List.of(0, 1, 2)), ConceptStage.lanes(List.of(a, a, a), 4), "one stream: one lane");
        assertEquals(List.of(List.of(0, 2), List.of(1)), ConceptStage.lanes(List.of(a, b, c), 2));
        assertEquals(List.of(), ConceptStage.lanes(List.of(), 4));
    }

    @Test
    void streamsAreToldApartByIdentity() {
        String one = new String("cam"), other = new String("cam");
        assertEquals(List.of(List.of(0), List.of(1)), ConceptStage.lanes(List.of(one, other), 4),
                "equal but distinct streams are two streams");
    }
}
