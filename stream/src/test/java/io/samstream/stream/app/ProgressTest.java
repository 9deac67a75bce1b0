package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ProgressTest {
    @Test
    void thePublishedCountNeverGoesBackwardsWhenStreamsEndOrLeave() {
        AtomicLong aPublished = new AtomicLong(10);
        AtomicLong bPublished = new AtomicLong(20);
        Progress.Counts a = new Progress.Counts(new Object(), aPublished::get, () -> 2);
        Progress.Counts b = new Progress.Counts(new Object(), bPublished::get, () -> 0);
        Progress.Totals totals = new Progress.Totals();
        assertArrayEquals(new long[] {30, 2}, totals.update(List.of(a, b)));
        // a ended after 12 frames and left the running list: its frames stay counted (before: 25).
        aPublished.set(12);
        bPublished.set(25);
        assertArrayEquals(new long[] {37, 2}, totals.update(List.of(b)));
        // b left too; a stream of the same id came back as a new stream.
        bPublished.set(26);
        Progress.Counts again = new Progress.Counts(new Object(), () -> 1, () -> 0);
        assertArrayEquals(new long[] {39, 2}, totals.update(List.of(again)));
        assertArrayEquals(new long[] {39, 2}, totals.update(List.of()));
    }
}
