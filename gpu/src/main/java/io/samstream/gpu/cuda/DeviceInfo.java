package io.samstream.gpu.cuda;

import java.util.Locale;

/**
 * What the driver says about one GPU.
 *
 * @param ordinal               device index, as {@code CUDA_VISIBLE_DEVICES} numbers them
 * @param name                  e.g. "NVIDIA H200"
 * @param ccMajor               compute capability, major (9 for Hopper)
 * @param ccMinor               compute capability, minor
 * @param multiprocessors       SM count
 * @param totalMemory           device memory in bytes
 * @param sharedMemPerBlockOptin the most dynamic shared memory one CTA may ask for after opting in
 * @param l2Bytes               L2 cache size
 * @param driverVersion         e.g. 13000 for CUDA 13.0
 */
public record DeviceInfo(int ordinal, String name, int ccMajor, int ccMinor, int multiprocessors, long totalMemory,
                         int sharedMemPerBlockOptin, int l2Bytes, int driverVersion) {

    public String describe() {
        return String.format(Locale.ROOT, "%s (device %d, sm_%d%d, %d SMs, %s, driver %d.%d)", name, ordinal, ccMajor,
                ccMinor, multiprocessors, Cuda.bytes(totalMemory), driverVersion / 1000, (driverVersion % 1000) / 10);
    }
}
