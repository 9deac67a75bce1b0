package io.samstream.gpu.cuda;

import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/** Error checking for driver API calls: every call's result goes through {@link #check}. */
public final class Cuda {
    private Cuda() {}

    /** Throws a {@link CudaException} naming the error and {@code doing} unless {@code result} is success. */
    static void check(int result, String doing) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new CudaException(result, errorName(result), doing);
        }
    }

    /** Same, with the description built only on failure (for calls on the hot path). */
    static void check(int result, java.util.function.Supplier<String> doing) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new CudaException(result, errorName(result), doing.get());
        }
    }

    static String errorName(int result) {
        try {
            String[] name = new String[1];
            if (JCudaDriver.cuGetErrorName(result, name) == CUresult.CUDA_SUCCESS && name[0] != null) {
                return name[0];
            }
        } catch (LinkageError ignored) {
            // fall through to JCuda's own table
        }
        return CUresult.stringFor(result);
    }

    /** {@code n} bytes for a message: B, MiB or GiB. */
    public static String bytes(long n) {
        if (n >= 1L << 30) {
            return String.format(java.util.Locale.ROOT, "%.2f GiB", n / (double) (1L << 30));
        }
        if (n >= 1L << 20) {
            return String.format(java.util.Locale.ROOT, "%.1f MiB", n / (double) (1L << 20));
        }
        return n + " B";
    }
}
