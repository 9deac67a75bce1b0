package io.samstream.gpu.cuda;

import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Can the CUDA backend run here? Answers once per process without ever throwing, with the reason as a
 * sentence for {@code --device auto} to log before it falls back to the CPU, and for GPU tests to skip
 * with. The checks, in order (the first that fails is the reason):
 * <ol>
 *   <li>this build carries the CUDA kernels (it does not when nvcc was absent at build time);</li>
 *   <li>JCuda's native library and the driver's {@code libcuda.so.1} load;</li>
 *   <li>{@code cuInit} succeeds and sees a GPU;</li>
 *   <li>the GPU has compute capability 8.0 or newer (bf16 tensor cores);</li>
 *   <li>the fatbin loads on it and every kernel is found.</li>
 * </ol>
 *
 * @param available true when all checks passed
 * @param reason    why not, or a description of the GPU when available
 * @param device    the GPU, when one was found (else null)
 */
public record CudaAvailability(boolean available, String reason, DeviceInfo device) {

    /** Kernels need sm_80+: bf16 mma.sync, cp.async. */
    public static final int MIN_CC_MAJOR = 8;

    private static volatile CudaAvailability cached;

    /** The result for device 0, probed on first use and remembered. */
    public static CudaAvailability probe() {
        CudaAvailability result = cached;
        if (result == null) {
            synchronized (CudaAvailability.class) {
                result = cached;
                if (result == null) {
                    result = probeDevice(0);
                    cached = result;
                }
            }
        }
        return result;
    }

    /**
     * The GPUs this process sees (as {@code CUDA_VISIBLE_DEVICES} leaves them), 0 when this build has no kernels
     * or the driver is not usable; never throws. Whether each can run the kernels: {@link #probeDevice}.
     */
    public static int deviceCount() {
        try {
            if (!CudaKernels.bundled()) {
                return 0;
            }
            JCudaDriver.setExceptionsEnabled(false);
            int[] count = new int[1];
            return JCudaDriver.cuInit(0) == CUresult.CUDA_SUCCESS
                    && JCudaDriver.cuDeviceGetCount(count) == CUresult.CUDA_SUCCESS ? count[0] : 0;
        } catch (Throwable t) { // LinkageError: no native library, no driver
            return 0;
        }
    }

    /** Probes device {@code ordinal} now (not cached). */
    public static CudaAvailability probeDevice(int ordinal) {
        try {
            return check(ordinal);
        } catch (Throwable t) {   // LinkageError from the native library, anything unexpected: never thrown
            return no("CUDA unavailable: " + firstLine(t), null);
        }
    }

    private static CudaAvailability check(int ordinal) {
        if (!CudaKernels.bundled()) {
            return no("this build has no CUDA kernels (nvcc was not found when the gpu module was built)", null);
        }
        try {
            JCudaDriver.setExceptionsEnabled(false);
        } catch (LinkageError e) {
            return no("the CUDA driver could not be loaded: " + nativeLoadReason(e), null);
        }
        int r = JCudaDriver.cuInit(0);
        if (r == CUresult.CUDA_ERROR_NO_DEVICE) {
            return no("no CUDA GPU found (cuInit: CUDA_ERROR_NO_DEVICE)", null);
        }
        if (r != CUresult.CUDA_SUCCESS) {
            return no("the CUDA driver did not initialise (cuInit: " + Cuda.errorName(r) + ")", null);
        }
        int[] count = new int[1];
        r = JCudaDriver.cuDeviceGetCount(count);
        if (r != CUresult.CUDA_SUCCESS || count[0] == 0) {
            return no("no CUDA GPU found", null);
        }
        if (ordinal >= count[0]) {
            return no("CUDA device " + ordinal + " does not exist (" + count[0] + " visible)", null);
        }
        try (CudaContext ctx = CudaContext.open(ordinal)) {
            DeviceInfo info = ctx.info();
            if (info.ccMajor() < MIN_CC_MAJOR) {
                return no(info.describe() + " is too old: the kernels need compute capability " + MIN_CC_MAJOR
                        + ".0 or newer (bf16 tensor cores)", info);
            }
            try (CudaKernels kernels = new CudaKernels(ctx)) {
                return new CudaAvailability(true, info.describe() + ", kernels loaded", info);
            } catch (RuntimeException e) {
                return no("the CUDA kernels do not load on " + info.describe() + ": " + e.getMessage(), info);
            }
        }
    }

    private static CudaAvailability no(String reason, DeviceInfo device) {
        return new CudaAvailability(false, reason, device);
    }

    /**
     * JCuda's load error lists every attempt with stack traces; the useful part is usually the dynamic
     * linker's complaint ("libcuda.so.1: cannot open shared object file"), i.e. no NVIDIA driver.
     */
    static String nativeLoadReason(Throwable t) {
        String m = String.valueOf(t.getMessage());
        for (String line : m.split("\n")) {
            int at = line.indexOf(": cannot open shared object file");
            if (at >= 0) {
                String lib = line.substring(0, at);
                lib = lib.substring(lib.lastIndexOf(": ") + 2);
                return lib + " not found" + (lib.startsWith("libcuda") ? " (no NVIDIA driver installed)" : "");
            }
        }
        return firstLine(t) + " (JCuda has natives for linux-x86_64 only; this is " + System.getProperty("os.name")
                + " " + System.getProperty("os.arch") + ")";
    }

    private static String firstLine(Throwable t) {
        while (t.getMessage() == null && t.getCause() != null) {
            t = t.getCause();
        }
        String m = t.getMessage();
        if (m == null || m.isBlank()) {
            return t.getClass().getSimpleName();
        }
        int nl = m.indexOf('\n');
        return (nl < 0 ? m : m.substring(0, nl)).trim();
    }
}
