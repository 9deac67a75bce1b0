package io.samstream.gpu.cuda;

/**
 * A CUDA driver call failed. The message names the error (e.g. {@code CUDA_ERROR_OUT_OF_MEMORY}) and
 * what was being done, e.g. "allocating the 8.00 GiB device memory pool".
 */
public class CudaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int result;

    public CudaException(String message) {
        super(message);
        this.result = -1;
    }

    CudaException(int result, String errorName, String doing) {
        super("CUDA error " + errorName + " (" + result + ") while " + doing);
        this.result = result;
    }

    /** The CUresult code, or -1 when the failure did not come from a driver call. */
    public int result() {
        return result;
    }
}
