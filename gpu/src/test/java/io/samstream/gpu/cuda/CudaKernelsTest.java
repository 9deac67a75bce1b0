package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

/**
 * What {@link CudaKernels} checks and expects of the fatbin, against the kernels' source (no GPU needed): which
 * buffers the TMA tiles may map, and the ABI version.
 */
class CudaKernelsTest {
    private static String source(String file) throws IOException {
        return Files.readString(Path.of("src/main/cuda", file));
    }

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

    /** The Java side expects the ABI version the fatbin's source declares. */
    @Test
    void abiVersionMatchesTheSource() throws IOException {
        assertTrue(source("samstream_kernels.cu").contains("samstream_kernels_abi = " + CudaKernels.ABI_VERSION + ";"));
    }
}
