package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * What {@link CudaKernels} checks and expects of the fatbin (no GPU needed): which buffers the TMA tiles may map, and
 * the ABI version, against the kernel table the build writes from the fatbin ({@link KernelTable}).
 */
class CudaKernelsTest {
    /**
     * The TMA tiles map only buffers whose device address is known and 16-byte aligned; others (a pool whose address
     * the driver did not give, an odd offset) make the GEMM fall back to the cp.async tile of the same width.
     */
    @Test
    void tmaMapsOnlyKnownAlignedAddresses() {
        jcuda.driver.CUdeviceptr base = new jcuda.driver.CUdeviceptr();
        DeviceBuffer pooled = new DeviceBuffer(base, 0x7f0000000000L, 256, 1024, "pooled");
        assertTrue(CudaKernels.tmaCanMap(pooled, pooled, null));
        assertTrue(CudaKernels.tmaCanMap(pooled.slice(16, 64, "16-byte offset")));
        assertFalse(CudaKernels.tmaCanMap(pooled, pooled.slice(8, 64, "8-byte offset")));
        assertFalse(CudaKernels.tmaCanMap(new DeviceBuffer(base, -1, 0, 1024, "address unknown")));
    }

    /** The Java side expects the ABI version of the fatbin this build bundles. */
    @Test
    void abiVersionMatchesTheFatbin() {
        assertEquals(CudaKernels.ABI_VERSION, KernelTable.bundled().abi());
    }
}
