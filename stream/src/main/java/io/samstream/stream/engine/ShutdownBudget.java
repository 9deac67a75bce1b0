package io.samstream.stream.engine;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * One time budget for a whole shutdown ({@code samstream.shutdown-timeout}), shared out among its phases by
 * cumulative fractions: a phase that may run until 60 % of the budget gets what is left of that, whatever the
 * phases before it used, so the phases together never take more than the budget.
 */
public final class ShutdownBudget {
    private final Duration total;
    private final long start;
    private final LongSupplier nanoClock;

    ShutdownBudget(Duration total, LongSupplier nanoClock) {
        if (total.isNegative() || total.isZero()) {
            throw new IllegalArgumentException("a shutdown budget must be positive, got " + total);
        }
        this.total = total;
        this.nanoClock = nanoClock;
        this.start = nanoClock.getAsLong();
    }

    /** A budget of {@code total} from now. */
    public static ShutdownBudget of(Duration total) {
        return new ShutdownBudget(total, System::nanoTime);
    }

    public Duration total() {
        return total;
    }

    /** The time left until {@code fraction} (0 to 1) of the budget has passed since its start; zero once past. */
    public Duration until(double fraction) {
        if (!(fraction >= 0 && fraction <= 1)) {
            throw new IllegalArgumentException("a fraction of the shutdown budget is 0 to 1, got " + fraction);
        }
        long end = start + (long) (total.toNanos() * fraction);
        return Duration.ofNanos(Math.max(0, end - nanoClock.getAsLong()));
    }

    /** The time left of the whole budget. */
    public Duration left() {
        return until(1);
    }

    /** Time since the start. */
    public Duration elapsed() {
        return Duration.ofNanos(nanoClock.getAsLong() - start);
    }
}
