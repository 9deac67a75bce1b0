package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Runs everywhere: the probe must answer, with a reason, whatever the machine has. */
class CudaAvailabilityTest {
    @Test
    void probeNeverThrowsAndAlwaysGivesAReason() {
        CudaAvailability a = CudaAvailability.probe();
        assertNotNull(a.reason());
        assertFalse(a.reason().isBlank());
        System.out.println("CUDA availability: " + (a.available() ? "yes: " : "no: ") + a.reason());
        assertTrue(CudaAvailability.probe() == a, "the result is remembered");
        if (!CudaKernels.bundled()) {
            assertFalse(a.available());
            assertTrue(a.reason().contains("this build has no CUDA kernels"), a.reason());
        }
        if (a.available()) {
            assertNotNull(a.device());
            assertTrue(a.device().ccMajor() >= CudaAvailability.MIN_CC_MAJOR);
        }
    }

    @Test
    void bundledFatbinIsAFatbin() throws Exception {
        Assumptions.assumeTrue(CudaKernels.bundled(), "this build has no CUDA kernels (no nvcc at build time)");
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(CudaKernels.RESOURCE)) {
            byte[] head = in.readNBytes(4);
            // fatbinary magic 0xBA55ED50, little-endian
            assertEquals(0xBA55ED50, ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt());
        }
    }
}
