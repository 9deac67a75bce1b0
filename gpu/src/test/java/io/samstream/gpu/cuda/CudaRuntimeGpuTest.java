package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.Test;
import io.samstream.gpu.cuda.kernels.AttentionKernels;
import io.samstream.gpu.cuda.kernels.GemmKernels;

/** The runtime layer: context, pool, pinned memory, copies, streams, events, error reporting. GPU only. */
class CudaRuntimeGpuTest extends GpuTestBase {
    @Test
    void deviceInfoIsSensible() {
        DeviceInfo d = gpu.context.info();
        System.out.println("device: " + d.describe() + ", L2 " + d.l2Bytes() / 1024 + " KiB, shared/CTA opt-in "
                + d.sharedMemPerBlockOptin() / 1024 + " KiB");
        assertTrue(d.multiprocessors() > 0);
        assertTrue(d.totalMemory() > GpuTestSupport.POOL_BYTES);
        assertTrue(d.sharedMemPerBlockOptin() >= 48 * 1024);
    }

    @Test
    void uploadDownloadRoundTripThroughPinnedMemory() {
        long mark = gpu.pool.mark();
        float[] v = GpuTestSupport.randomBf16(new Random(7), 1_000_003, 3.0);
        DeviceBuffer b = gpu.upload(v, "round trip");
        DeviceBuffer c = gpu.poisoned(v.length, "copy");
        gpu.stream.copy(b, c, (long) v.length * 2);
        assertArrayEquals(v, gpu.download(c, v.length));
        gpu.pool.release(mark);
    }

    @Test
    void eventsOrderStreamsAndTimeWork() {
        long mark = gpu.pool.mark();
        int n = 16 << 20;
        DeviceBuffer a = gpu.pool.allocateBf16(n, "a");
        DeviceBuffer b = gpu.pool.allocateBf16(n, "b");
        try (CudaStream other = new CudaStream(gpu.context);
             CudaEvent start = new CudaEvent(gpu.context, true);
             CudaEvent filled = new CudaEvent(gpu.context, true)) {
            gpu.stream.record(start);
            gpu.stream.fill16(a, Bf16.fromFloat(1.5f));
            gpu.stream.record(filled);
            other.waitFor(filled);          // the copy on `other` must see the fill on `stream`
            other.copy(a, b, (long) n * 2);
            other.synchronize();
            filled.synchronize();
            float ms = CudaEvent.elapsedMillis(start, filled);
            System.out.printf("fill of %d MiB: %.3f ms (%.0f GB/s)%n", n * 2 >> 20, ms, n * 2 / (ms * 1e6));
            assertTrue(ms >= 0);
            float[] got = gpu.download(b, n - 5, 5);
            assertArrayEquals(new float[] {1.5f, 1.5f, 1.5f, 1.5f, 1.5f}, got);
        }
        gpu.pool.release(mark);
    }

    /**
     * The pool knows its device address (the TMA tensor maps need the number), and a buffer's is the pool's plus its
     * offset: the kernels and the tensor maps see the same bytes. A GEMM on the TMA tiles checks the rest.
     */
    @Test
    void buffersKnowTheirDeviceAddress() {
        long mark = gpu.pool.mark();
        DeviceBuffer a = gpu.pool.allocate(4096, "a"), b = gpu.pool.allocate(4096, "b");
        assertTrue(a.address() > 0 && a.address() % 256 == 0, "pool address " + a.address());
        assertEquals(a.address() + (b.offset() - a.offset()), b.address());
        assertEquals(b.address() + 1024, b.slice(1024, 16, "slice").address());
        gpu.pool.release(mark);
    }

    @Test
    void poolExhaustionIsAClearError() {
        CudaException e = assertThrows(CudaException.class,
                () -> gpu.pool.allocate(GpuTestSupport.POOL_BYTES + 1, "an oversized tensor"));
        assertTrue(e.getMessage().contains("an oversized tensor"), e.getMessage());
    }

    @Test
    void driverErrorsNameTheErrorAndTheAction() {
        // More than the device has: cuMemAlloc fails, and the message says so and what was being done.
        long tooMuch = gpu.context.info().totalMemory() * 4;
        CudaException e = assertThrows(CudaException.class, () -> new DeviceMemoryPool(gpu.context, tooMuch));
        System.out.println("expected error: " + e.getMessage());
        assertTrue(e.getMessage().contains("CUDA_ERROR_OUT_OF_MEMORY"), e.getMessage());
        assertTrue(e.getMessage().contains("allocating"), e.getMessage());
        // The context is still usable afterwards.
        long mark = gpu.pool.mark();
        assertEquals(2, gpu.download(gpu.upload(new float[] {1, 2}, "after error"), 2).length);
        gpu.pool.release(mark);
    }

    @Test
    void launchArgumentsAreCheckedBeforeLaunching() {
        long mark = gpu.pool.mark();
        DeviceBuffer small = gpu.pool.allocateBf16(16, "small");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GemmKernels.of(gpu.kernels).run(gpu.stream, small, small, null, null, small, 64, 64, 64, false));
        assertTrue(e.getMessage().contains("gemm m=64 n=64 k=64"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> GemmKernels.of(gpu.kernels).run(gpu.stream, small, small, null, null, small, 1, 8, 12, false));
        assertThrows(IllegalArgumentException.class,
                () -> AttentionKernels.of(gpu.kernels).run(gpu.stream, small, null, small, small, small, 1, 8, 8, 1, 96, 0));
        gpu.pool.release(mark);
    }
}
