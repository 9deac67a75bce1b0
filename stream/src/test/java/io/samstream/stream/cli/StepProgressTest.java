package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class StepProgressTest {
    @Test
    void showsEachStepWhenDueAndNeverACountBelowOneShown() {
        StringWriter text = new StringWriter();
        StepProgress p = new StepProgress(new PrintWriter(text), "prompt sets decoded", Duration.ZERO, false);
        p.step(1, 4);
        p.step(3, 4);
        p.step(2, 4); // late report of an earlier step: not shown
        p.step(4, 4);
        List<String> lines = text.toString().lines().map(l -> l.replaceAll(", [0-9.]+ s$", "")).toList();
        assertEquals(List.of("segment: prompt sets decoded: 1/4 (25 %)", "segment: prompt sets decoded: 3/4 (75 %)",
                "segment: prompt sets decoded: 4/4 (100 %)"), lines);
    }

    @Test
    void aShortJobPrintsNothingUnlessAsked() {
        StringWriter quiet = new StringWriter();
        StepProgress p = new StepProgress(new PrintWriter(quiet), "sets", Duration.ofHours(1), false);
        p.step(1, 2);
        p.step(2, 2);
        assertEquals("", quiet.toString());

        StringWriter always = new StringWriter();
        StepProgress q = new StepProgress(new PrintWriter(always), "points", Duration.ofHours(1), true);
        q.step(5, 10);
        q.step(10, 10);
        assertEquals(1, always.toString().lines().count(), always.toString());
    }
}
