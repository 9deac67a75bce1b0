package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ShutdownBudgetTest {
    @Test
    void phasesEndAtTheirShareOfTheBudgetWhateverTheEarlierOnesUsed() {
        AtomicLong now = new AtomicLong(1_000);
        ShutdownBudget b = new ShutdownBudget(Duration.ofSeconds(15), now::get);
        assertEquals(Duration.ofSeconds(9), b.until(0.6));
        now.addAndGet(Duration.ofSeconds(12).toNanos()); // the first phase overran its share
        assertEquals(Duration.ZERO, b.until(0.6), "a phase past its end gets nothing");
        assertEquals(Duration.ofSeconds(3), b.left(), "the last phase gets only what is left of 15 s");
        assertEquals(Duration.ofSeconds(12), b.elapsed());
        now.addAndGet(Duration.ofSeconds(10).toNanos());
        assertEquals(Duration.ZERO, b.left());
    }

    @Test
    void badBudgetsAndFractionsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> ShutdownBudget.of(Duration.ZERO));
        ShutdownBudget b = ShutdownBudget.of(Duration.ofSeconds(1));
        assertThrows(IllegalArgumentException.class, () -> b.until(1.5));
        assertThrows(IllegalArgumentException.class, () -> b.until(Double.NaN));
    }
}
