package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;
import io.samstream.gpu.cuda.kernels.NormKernels;

/**
 * {@link LaunchTimer}: while attached, every launch is counted under its kernel and timed; behind a hold, a launch
 * of 1,024 times the rows of the same kernel takes longer (without it, the host's launch latency swamps a small
 * kernel's pair: 27 us for 64 rows against 39 us for 65,536 on the H200); detached, launches are no longer seen.
 */
class LaunchTimerGpuTest extends GpuTestBase {
    @Test
    void countsAndTimesEachKernelsLaunches() {
        int c = 256, small = 64, big = 1 << 16;
        long mark = gpu.pool.mark();
        try (LaunchTimer timer = new LaunchTimer(gpu.context)) {
            DeviceBuffer x = gpu.pool.allocateBf16((long) big * c, "x");
            DeviceBuffer y = gpu.pool.allocateBf16((long) big * c, "y");
            DeviceBuffer gamma = gpu.pool.allocateBf16(c, "gamma"), beta = gpu.pool.allocateBf16(c, "beta");
            gpu.stream.fill16(x, (short) 0x3f80);
            gpu.stream.fill16(gamma, (short) 0x3f80);
            gpu.stream.fill16(beta, (short) 0);
            // Untimed first launches (module and caches warm), then the timed ones.
            NormKernels.of(gpu.kernels).layerNorm(gpu.stream, x, gamma, beta, y, big, c, 1e-6f);
            gpu.kernels.timeLaunches(timer);
            NormKernels.of(gpu.kernels).layerNorm(gpu.stream, x, gamma, beta, y, big, c, 1e-6f);
            timer.drain();   // the timer's own events warm
            timer.hold(gpu.kernels, gpu.stream, 20);   // the launches below queue up: their pairs time the GPU alone
            NormKernels.of(gpu.kernels).layerNorm(gpu.stream, x, gamma, beta, y, small, c, 1e-6f);
            NormKernels.of(gpu.kernels).layerNorm(gpu.stream, x, gamma, beta, y, small, c, 1e-6f);
            Map<String, double[]> smallRuns = timer.drain();
            timer.hold(gpu.kernels, gpu.stream, 20);
            NormKernels.of(gpu.kernels).layerNorm(gpu.stream, x, gamma, beta, y, big, c, 1e-6f);
            Map<String, double[]> bigRun = timer.drain();
            gpu.kernels.timeLaunches(null);
            NormKernels.of(gpu.kernels).layerNorm(gpu.stream, x, gamma, beta, y, big, c, 1e-6f);
            gpu.stream.synchronize();
            assertTrue(timer.drain().isEmpty(), "a launch after detaching was timed");

            assertEquals(1, smallRuns.size(), smallRuns.keySet().toString());
            String kernel = smallRuns.keySet().iterator().next();
            assertEquals(2.0, smallRuns.get(kernel)[0], "launches counted");
            assertEquals(1.0, bigRun.get(kernel)[0], "launches counted after a drain");
            double perSmall = smallRuns.get(kernel)[1] / 2, perBig = bigRun.get(kernel)[1];
            System.out.printf("%s: %.4f ms for %d rows, %.4f ms for %d rows%n", kernel, perSmall, small, perBig, big);
            assertTrue(perSmall > 0 && perBig > 2 * perSmall, "1,024 times the rows should take longer");
        } finally {
            gpu.pool.release(mark);
        }
    }
}
