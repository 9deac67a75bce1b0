package io.samstream.gpu.cuda;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;

/**
 * Base of the GPU test classes: opens {@link GpuTestSupport} once per class when a GPU is usable, and
 * skips every test (one by one, so each shows as skipped with the reason in the reports) when not.
 * Tagged "gpu": tools/device/run-gpu-tests.sh runs these on the GPU machine.
 */
@Tag("gpu")
public abstract class GpuTestBase {
    protected static GpuTestSupport gpu;

    @BeforeAll
    protected static void openGpu() {
        if (CudaAvailability.probe().available()) {
            gpu = GpuTestSupport.open();
        }
    }

    @AfterAll
    protected static void closeGpu() {
        if (gpu != null) {
            gpu.close();
            gpu = null;
        }
    }

    @BeforeEach
    protected void requireGpu() {
        GpuTestSupport.assumeGpu();
    }
}
