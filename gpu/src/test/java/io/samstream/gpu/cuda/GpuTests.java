package io.samstream.gpu.cuda;

import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Assumptions;

/**
 * The one gate of every GPU test: skips (JUnit assumption) where {@link CudaAvailability} says no GPU is
 * usable, and says why once per test run on the console, so a CI log shows the reason next to the
 * skipped count instead of only in the XML reports.
 */
public final class GpuTests {
    private static final AtomicBoolean REASON_SHOWN = new AtomicBoolean();

    private GpuTests() {}

    public static void assumeGpu() {
        CudaAvailability a = CudaAvailability.probe();
        if (!a.available() && REASON_SHOWN.compareAndSet(false, true)) {
            System.out.println("GPU tests skip on this machine: " + a.reason());
        }
        Assumptions.assumeTrue(a.available(), () -> "GPU tests skipped: " + a.reason());
    }
}
