package io.samstream.gpu.cuda.sam2;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.sam2.ObjectPrompt;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** How the GPU tracker plans a step and which prompts it refuses, before any GPU work (no GPU needed). */
class StepPlanTest {
    @Test
    void promptsTheDecoderCannotTakeAreRefusedByName() {
        StepPlan.checkPrompts(List.of(ObjectPrompt.box(1, 10, 10, 50, 50), ObjectPrompt.point(2, 5, 5, true)));
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> StepPlan
                .checkPrompts(List.of(ObjectPrompt.point(3, 5, 5, true), ObjectPrompt.point(3, 6, 6, false))));
        assertTrue(twice.getMessage().contains("two prompts for object 3"), twice.getMessage());
        float[][] many = new float[CudaSam2MaskDecoder.MAX_SPARSE][];
        int[] labels = new int[many.length];
        for (int i = 0; i < many.length; i++) {
            many[i] = new float[] {i, i};
            labels[i] = 1;
        }
        IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class,
                () -> StepPlan.checkPrompts(List.of(new ObjectPrompt(4, null, many, labels))));
        assertTrue(tooMany.getMessage().startsWith("object 4: " + many.length + " points"), tooMany.getMessage());
        IllegalArgumentException nan = assertThrows(IllegalArgumentException.class,
                () -> StepPlan.checkPrompts(List.of(ObjectPrompt.box(5, Float.NaN, 0, 10, 10))));
        assertTrue(nan.getMessage().contains("object 5: a point that is not a finite number"), nan.getMessage());
    }

    /** A request's frame and prompts are checked with its index named; a good one passes. */
    @Test
    void aBadRequestIsRefusedNamingIt() {
        StepPlan.checkRequest(0, new byte[3 * 4 * 4], 4, List.of(ObjectPrompt.point(1, 1, 1, true)));
        IllegalArgumentException size = assertThrows(IllegalArgumentException.class,
                () -> StepPlan.checkRequest(1, new byte[3], 4, List.of()));
        assertEquals("request 1 of the step: RGB frame of 3 bytes; the model takes 4 x 4 (resize first)",
                size.getMessage());
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> StepPlan.checkRequest(2, null, 4, List.of()));
        assertTrue(none.getMessage().startsWith("request 2 of the step: RGB frame of 0 bytes"), none.getMessage());
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> StepPlan.checkRequest(3,
                new byte[3 * 4 * 4], 4, List.of(ObjectPrompt.point(7, 1, 1, true), ObjectPrompt.point(7, 2, 2, true))));
        assertEquals("request 3 of the step: two prompts for object 7 on one frame", twice.getMessage());
    }

    /** Streams are numbered by their first request, told apart by identity, each listed once. */
    @Test
    void requestsAreGroupedByTheirStreamsIdentity() {
        String a = new String("cam"), b = new String("cam"), c = new String("other");
        List<String> distinct = new ArrayList<>();
        assertArrayEquals(new int[] {0, 1, 0, 2, 1}, StepPlan.streamIndexes(List.of(a, b, a, c, b), distinct));
        assertEquals(3, distinct.size());
        assertTrue(distinct.get(0) == a && distinct.get(1) == b && distinct.get(2) == c, "first-request order");
        assertArrayEquals(new int[0], StepPlan.streamIndexes(List.of(), new ArrayList<>()));
    }

    private static List<List<ObjectPrompt>> noPrompts(int n) {
        return new ArrayList<>(Collections.nCopies(n, List.of()));
    }

    @Test
    void aStreamsFramesInOneStepAreEncodedChunkByChunkAndRunInRounds() {
        // One stream that follows an object, 20 frames, 8 encoder slots: 8 + 8 + 4 frames, each frame its own round.
        int[] one = new int[20];
        List<StepPlan.Pass> passes = StepPlan.plan(one, List.of(Set.of(1)), noPrompts(20), 8);
        assertEquals(3, passes.size(), passes.toString());
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), passes.get(0).frames());
        assertEquals(List.of(List.of(0), List.of(1), List.of(2), List.of(3), List.of(4), List.of(5), List.of(6),
                List.of(7)), passes.get(0).units());
        assertEquals(List.of(16, 17, 18, 19), passes.get(2).frames());
        for (StepPlan.Pass p : passes) {
            assertTrue(p.frames().size() <= 8, "at most maxFrames encoder slots: " + p);
        }
    }

    @Test
    void severalStreamsFramesRunRoundByRoundAsStepsOfEachRoundWould() {
        // Streams 0, 1, 2 with 4 frames each, interleaved as the engine lists a micro-batch (stream 2's frames last).
        int[] streamOf = {0, 1, 0, 1, 0, 1, 0, 1, 2, 2, 2, 2};
        List<Set<Integer>> followed = List.of(Set.of(1), Set.of(1, 2), Set.of(3));
        List<StepPlan.Pass> passes = StepPlan.plan(streamOf, followed, noPrompts(12), 8);
        List<List<Integer>> units = new ArrayList<>();
        for (StepPlan.Pass p : passes) {
            units.addAll(p.units());
            assertTrue(p.frames().size() <= 8, p.toString());
            // a pass encodes exactly the frames of its units
            List<Integer> inUnits = new ArrayList<>();
            p.units().forEach(inUnits::addAll);
            assertEquals(inUnits, p.frames());
        }
        assertEquals(List.of(List.of(0, 1, 8), List.of(2, 3, 9), List.of(4, 5, 10), List.of(6, 7, 11)), units,
                "round r: the r-th frame of every stream");
        assertEquals(List.of(0, 1, 8, 2, 3, 9), passes.get(0).frames(), "whole rounds while they fit");
        // A round wider than the encoder's pass is cut as a step of that round alone would cut it.
        List<StepPlan.Pass> narrow = StepPlan.plan(streamOf, followed, noPrompts(12), 2);
        List<List<Integer>> cut = new ArrayList<>();
        narrow.forEach(p -> cut.addAll(p.units()));
        assertEquals(List.of(List.of(0, 1), List.of(8), List.of(2, 3), List.of(9), List.of(4, 5), List.of(10),
                List.of(6, 7), List.of(11)), cut);
    }

    @Test
    void framesWithNothingToFollowAreNotEncodedUntilAPromptComes() {
        // A stream with no objects: frames 0-1 have nothing to follow, frame 2 is prompted, 3 follows that object.
        int[] streamOf = {0, 0, 0, 0};
        List<List<ObjectPrompt>> prompts = noPrompts(4);
        prompts.set(2, List.of(ObjectPrompt.point(5, 3, 3, true)));
        List<StepPlan.Pass> passes = StepPlan.plan(streamOf, List.of(Set.of()), prompts, 8);
        assertEquals(1, passes.size());
        assertEquals(List.of(2, 3), passes.get(0).frames());
        assertEquals(4, passes.get(0).units().size(), "every frame still moves the stream on");
    }

    @Test
    void theObjectLimitCountsEveryRequestsNewIds() {
        int[] streamOf = {0, 0, 1, 0};
        List<List<ObjectPrompt>> prompts = noPrompts(4);
        prompts.set(0, List.of(ObjectPrompt.point(1, 3, 3, true), ObjectPrompt.point(2, 3, 3, true)));
        prompts.set(1, List.of(ObjectPrompt.point(2, 4, 4, true), ObjectPrompt.point(3, 4, 4, true)));
        prompts.set(2, List.of(ObjectPrompt.point(1, 3, 3, true)));
        prompts.set(3, List.of(ObjectPrompt.point(4, 3, 3, true), ObjectPrompt.point(7, 3, 3, true)));
        // stream 0 follows 7 already; new: 1, 2 (frame 0), 3 (frame 1; 2 again is a re-prompt), 4 (frame 3); stream 1: 1
        assertEquals(5, StepPlan.newObjects(streamOf, List.of(Set.of(7), Set.of()), prompts));
    }
}
