package io.samstream.gpu.cuda;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxGetState;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxSetFlags;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuDeviceTotalMem;
import static jcuda.driver.JCudaDriver.cuDriverGetVersion;
import static jcuda.driver.JCudaDriver.cuInit;

import java.nio.charset.StandardCharsets;

import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUctx_flags;
import jcuda.driver.JCudaDriver;

/**
 * The primary context of one GPU (the one the CUDA runtime, and so PyTorch, would also use), retained
 * for this object's lifetime.
 *
 * <p>Driver API calls act on the calling thread's current context: every class of this package calls
 * {@link #bind()} before it touches the GPU, so any thread may use the objects made from this context
 * (each CUDA stream is still meant for one thread at a time).
 */
public final class CudaContext implements AutoCloseable {
    private static final ThreadLocal<CudaContext> BOUND = new ThreadLocal<>();

    private final CUdevice device = new CUdevice();
    private final CUcontext context = new CUcontext();
    private final DeviceInfo info;
    private boolean closed;

    private CudaContext(int ordinal) {
        Cuda.check(cuDeviceGet(device, ordinal), "getting CUDA device " + ordinal);
        this.info = queryInfo(device, ordinal);
        // Blocking sync (a waiting thread sleeps instead of spinning a core), the flags FFmpeg's CUDA device
        // context asks of a primary context it shares: NVDEC's frames then live on this very context.
        int[] flags = new int[1];
        int[] active = new int[1];
        Cuda.check(cuDevicePrimaryCtxGetState(device, flags, active), "reading the primary context's state");
        if (active[0] == 0 && flags[0] != CUctx_flags.CU_CTX_SCHED_BLOCKING_SYNC) {
            Cuda.check(cuDevicePrimaryCtxSetFlags(device, CUctx_flags.CU_CTX_SCHED_BLOCKING_SYNC),
                    "setting the primary context's flags");
        }
        Cuda.check(cuDevicePrimaryCtxRetain(context, device), "retaining the primary context of " + info.describe());
        bind();
    }

    /**
     * Initialises the driver and retains device {@code ordinal}'s primary context.
     *
     * @throws CudaException   when the driver or the device is not usable
     * @throws LinkageError    when JCuda's native library or libcuda cannot be loaded (see {@link CudaAvailability}
     *                         for a check that never throws)
     */
    public static CudaContext open(int ordinal) {
        initDriver();
        int[] count = new int[1];
        Cuda.check(cuDeviceGetCount(count), "counting CUDA devices");
        if (ordinal < 0 || ordinal >= count[0]) {
            throw new CudaException("CUDA device " + ordinal + " does not exist (" + count[0] + " device(s) visible)");
        }
        return new CudaContext(ordinal);
    }

    static void initDriver() {
        JCudaDriver.setExceptionsEnabled(false);   // every result is checked explicitly, with context
        Cuda.check(cuInit(0), "initialising the CUDA driver (cuInit)");
    }

    static DeviceInfo queryInfo(CUdevice device, int ordinal) {
        byte[] name = new byte[256];
        Cuda.check(cuDeviceGetName(name, name.length, device), "reading the device name");
        int len = 0;
        while (len < name.length && name[len] != 0) {
            len++;
        }
        long[] mem = new long[1];
        Cuda.check(cuDeviceTotalMem(mem, device), "reading the device memory size");
        int[] driver = new int[1];
        Cuda.check(cuDriverGetVersion(driver), "reading the driver version");
        return new DeviceInfo(ordinal, new String(name, 0, len, StandardCharsets.UTF_8),
                attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
                attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), mem[0],
                attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
                attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE), driver[0]);
    }

    private static int attribute(CUdevice device, int attribute) {
        int[] v = new int[1];
        Cuda.check(cuDeviceGetAttribute(v, attribute, device), "reading device attribute " + attribute);
        return v[0];
    }

    /** Bytes of the GPU's memory in use now, by every process and library (total - free, cuMemGetInfo). */
    public long deviceMemoryUsed() {
        bind();
        long[] free = new long[1];
        long[] total = new long[1];
        Cuda.check(jcuda.driver.JCudaDriver.cuMemGetInfo(free, total), "reading the device's free memory");
        return total[0] - free[0];
    }

    public DeviceInfo info() {
        return info;
    }

    /**
     * Whether {@code other} is the same device's context: both are its primary context, so their memory, streams and
     * events may be used together (two objects opened on one device are).
     */
    public boolean sameContext(CudaContext other) {
        return other != null && info.ordinal() == other.info.ordinal();
    }

    /** Makes this context current on the calling thread (a no-op when it already is). */
    public void bind() {
        if (closed) {
            throw new IllegalStateException("CUDA context of " + info.describe() + " is closed");
        }
        if (BOUND.get() != this) {
            Cuda.check(cuCtxSetCurrent(context), "making the CUDA context current");
            BOUND.set(this);
        }
    }

    /** Waits for all work on all streams of this context; for tests and shutdown, not the hot path. */
    public void synchronize() {
        bind();
        Cuda.check(cuCtxSynchronize(), "waiting for the GPU (cuCtxSynchronize)");
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            if (BOUND.get() == this) {
                BOUND.remove();
            }
            Cuda.check(cuDevicePrimaryCtxRelease(device), "releasing the primary context");
        }
    }

    @Override
    public String toString() {
        return "CudaContext[" + info.describe() + "]";
    }
}
