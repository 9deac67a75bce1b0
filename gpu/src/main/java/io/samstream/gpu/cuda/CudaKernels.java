package io.samstream.gpu.cuda;

import static jcuda.driver.JCudaDriver.cuFuncGetAttribute;
import static jcuda.driver.JCudaDriver.cuFuncSetAttribute;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleGetGlobal;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;
import static jcuda.driver.JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

import org.slf4j.LoggerFactory;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;

/**
 * The kernels of {@code gpu/src/main/cuda}, loaded from the fatbin the build bundles: the module, its table of
 * kernels and the launch that checks a kernel's shared memory. The launchers, by family, each checking shapes, sizes
 * and alignment before it queues anything, are made from it ({@link #family}: {@code GemmKernels.of(kernels)} and
 * the like).
 *
 * <p>All tensors are bf16, row-major, contiguous. Launches are asynchronous on the given stream.
 */
public final class CudaKernels implements AutoCloseable {
    /** Class-path location of the fatbin built by {@code gpu/src/main/cuda/build-fatbin.sh}. */
    public static final String RESOURCE = "io/samstream/gpu/cuda/samstream_kernels.fatbin";
    /** Must match {@code samstream_kernels_abi} in samstream_kernels.cu. */
    static final int ABI_VERSION = 10;

    private final CudaContext context;
    private final CUmodule module = new CUmodule();
    /** The kernels looked up so far: replaced whole on each addition, so that launches read it without a lock. */
    private volatile Map<String, Kernel> kernels = Map.of();
    /** The launcher families made so far, by class ({@link #family}). */
    private final Map<Class<?>, Object> families = new HashMap<>();
    private final Map<String, CUfunction> extraFunctions = new LinkedHashMap<>();
    private TensorMaps tensorMaps;
    private String tensorMapsProblem;   // why the tensor-map encoder could not be bound (null: bound or not tried)
    private final AtomicBoolean tmaFallbackLogged = new AtomicBoolean();   // a GEMM's fallback from a TMA tile
    private boolean closed;
    private LaunchTimer timer;   // benchmarks only: every launch timed (timeLaunches)
    private static final String HOLD = "samstream_hold";

    private record Kernel(String name, CUfunction function, int maxDynamicSmem, int registers) {}

    /** True when this build carries the fatbin (it does not when nvcc was absent at build time). */
    public static boolean bundled() {
        return CudaKernels.class.getClassLoader().getResource(RESOURCE) != null;
    }

    static byte[] readFatbin() {
        try (InputStream in = CudaKernels.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new CudaException("this build has no CUDA kernels (" + RESOURCE
                        + " is missing: nvcc was not found when the gpu module was built)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + RESOURCE, e);
        }
    }

    /** Loads the fatbin into {@code context} and checks its ABI version; the families look their kernels up. */
    public CudaKernels(CudaContext context) {
        this.context = context;
        byte[] fatbin = readFatbin();
        context.bind();
        DeviceInfo dev = context.info();
        int r = cuModuleLoadData(module, fatbin);
        if (r == CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU) {
            throw new CudaException(r, Cuda.errorName(r), "loading the CUDA kernels: the fatbin has code for sm_80/86/89/90a"
                    + " and compute_80 PTX, none of which runs on " + dev.describe());
        }
        Cuda.check(r, () -> "loading the CUDA kernels (" + Cuda.bytes(fatbin.length) + " fatbin) on " + dev.describe());
        checkAbi();

        add(HOLD, 0);
    }

    /**
     * The launcher family {@code type} of these kernels, made by {@code make} the first time it is asked for: one per
     * {@code CudaKernels}; a family looks its kernels up ({@link #add}) when made, so a fatbin without one fails there.
     */
    public synchronized <T> T family(Class<T> type, Function<CudaKernels, T> make) {
        Object f = families.get(type);
        if (f == null) {
            f = make.apply(this);
            families.put(type, f);
        }
        return type.cast(f);
    }

    private void checkAbi() {
        CUdeviceptr ptr = new CUdeviceptr();
        long[] size = new long[1];
        Cuda.check(cuModuleGetGlobal(ptr, size, module, "samstream_kernels_abi"),
                "looking up samstream_kernels_abi in the fatbin");
        int[] abi = new int[1];
        Cuda.check(cuMemcpyDtoH(Pointer.to(abi), ptr, 4), "reading samstream_kernels_abi");
        if (abi[0] != ABI_VERSION) {
            throw new CudaException("the bundled CUDA kernels have ABI version " + abi[0] + ", this code expects "
                    + ABI_VERSION + ": rebuild the gpu module");
        }
    }

    /**
     * Looks a kernel up and allows it as much dynamic shared memory as it can need (up to the device's limit): the
     * families register theirs when made.
     */
    public synchronized void add(String name, int smemNeeded) {
        CUfunction f = new CUfunction();
        Cuda.check(cuModuleGetFunction(f, module, name), "looking up kernel " + name + " in the fatbin");
        int allowed = Math.min(smemNeeded, context.info().sharedMemPerBlockOptin());
        if (allowed > 48 * 1024) {
            Cuda.check(cuFuncSetAttribute(f, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, allowed),
                    "allowing kernel " + name + " " + allowed + " B of shared memory");
        }
        if (smemNeeded > 0) {
            // All of L1 as shared memory, so that as many CTAs fit as the registers allow.
            Cuda.check(cuFuncSetAttribute(f, CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100),
                    "setting the shared-memory carveout of " + name);
        }
        int[] regs = new int[1];
        Cuda.check(cuFuncGetAttribute(regs, CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, f),
                "reading the register count of " + name);
        Map<String, Kernel> more = new LinkedHashMap<>(kernels);
        more.put(name, new Kernel(name, f, Math.max(allowed, 48 * 1024), regs[0]));
        kernels = more;
    }

    /**
     * A kernel of the fatbin by its extern "C" name, for the launchers that keep no table entry ({@code
     * ImageOpsKernels}, {@code AppearanceKernels}; {@link #launchFunction}); looked up once. Fails, naming the
     * kernel, when the fatbin lacks it.
     */
    public synchronized CUfunction function(String name) {
        if (closed) {
            throw new IllegalStateException("CUDA kernels are closed");
        }
        CUfunction f = extraFunctions.get(name);
        if (f == null) {
            f = new CUfunction();
            context.bind();
            Cuda.check(cuModuleGetFunction(f, module, name), "looking up kernel " + name
                    + " in the fatbin (a build older than the code? rebuild the gpu module)");
            extraFunctions.put(name, f);
        }
        return f;
    }

    /** One line per kernel: name, registers, shared memory allowed. For logs. */
    public String describe() {
        StringBuilder sb = new StringBuilder("CUDA kernels on " + context.info().describe() + ":");
        for (Kernel k : kernels.values()) {
            sb.append(String.format(Locale.ROOT, "%n  %-32s %3d registers, up to %3d KiB shared", k.name, k.registers,
                    k.maxDynamicSmem / 1024));
        }
        return sb.toString();
    }

    public CudaContext context() {
        return context;
    }

    /** True on compute capability 9.0 (H100, H200): the warpgroup-MMA and TMA kernels run there only. */
    public boolean hopper() {
        DeviceInfo dev = context.info();
        return dev.ccMajor() == 9 && dev.ccMinor() == 0;
    }

    // ------------------------------------------------------------------------------------------------
    // TMA: tensor maps of the GEMMs' operands
    // ------------------------------------------------------------------------------------------------

    /**
     * Whether tensor maps can describe these buffers (null ones are not mapped): their device addresses are known
     * ({@link DeviceMemoryPool} reads the pool's) and 16-byte aligned, as {@code cuTensorMapEncodeTiled} requires.
     */
    public static boolean tmaCanMap(DeviceBuffer... buffers) {
        for (DeviceBuffer b : buffers) {
            if (b != null && (b.baseAddress() < 0 || (b.baseAddress() + b.offset()) % 16 != 0)) {
                return false;
            }
        }
        return true;
    }

    /** The tensor-map encoder of the TMA GEMM, bound at its first use (JNA; see {@link TensorMaps}). */
    public synchronized TensorMaps tensorMaps() {
        if (tensorMaps == null) {
            tensorMaps = TensorMaps.open();
        }
        return tensorMaps;
    }

    /**
     * True when the TMA tiles can run here: compute capability 9.0 and the driver's tensor-map encoder bound. When
     * it cannot be bound, says why once (the log) and the GEMMs fall back to the cp.async-fed tiles.
     */
    public synchronized boolean tmaAvailable() {
        if (!hopper()) {
            return false;
        }
        if (tensorMaps == null && tensorMapsProblem == null) {
            try {
                tensorMaps();
            } catch (CudaException e) {
                tensorMapsProblem = e.getMessage();
                LoggerFactory.getLogger(CudaKernels.class).warn("TMA GEMM unavailable, using the cp.async Hopper GEMM: {}",
                        tensorMapsProblem);
            }
        }
        return tensorMaps != null;
    }

    /** True the first time a GEMM falls back from a TMA tile (so that it is logged once). */
    public boolean firstTmaFallback() {
        return tmaFallbackLogged.compareAndSet(false, true);
    }

    // ------------------------------------------------------------------------------------------------
    // Launches
    // ------------------------------------------------------------------------------------------------

    /**
     * Times every launch from here on with {@code t} (null: stops timing). For benchmarks, single-threaded, outside
     * CUDA graph capture; launches made elsewhere (the appearance kernels' own) are not seen.
     */
    public void timeLaunches(LaunchTimer t) {
        timer = t;
    }

    /** Keeps {@code stream} busy for about {@code nanos} ns (samstream_hold, not timed): see {@link LaunchTimer#hold}. */
    void hold(CudaStream stream, long nanos) {
        Kernel k = kernels.get(HOLD);
        context.bind();
        Cuda.check(cuLaunchKernel(k.function, 1, 1, 1, 32, 1, 1, 0, stream.stream,
                Pointer.to(Pointer.to(new long[] {nanos})), null), "launching " + HOLD);
    }

    /** Launches a kernel registered with {@link #add} with a 32 x 8 block and no dynamic shared memory. */
    public void launch2d(String name, int gx, int gy, int gz, CudaStream stream, Pointer params, String op) {
        if (closed) {
            throw new IllegalStateException("CUDA kernels are closed");
        }
        Kernel k = kernels.get(name);
        context.bind();
        if (timer != null) {
            timer.before(name, stream);
        }
        Cuda.check(cuLaunchKernel(k.function, gx, gy, gz, 32, 8, 1, 0, stream.stream, params, null),
                () -> "launching " + name + " for " + op);
        if (timer != null) {
            timer.after(stream);
        }
    }

    /**
     * CTAs of a kernel registered with {@link #add} that one SM holds at once with {@code threads} threads and
     * {@code smem} bytes of dynamic shared memory (the driver's occupancy calculator; at least 1).
     */
    public int residentCtas(String name, int threads, int smem) {
        int[] n = new int[1];
        context.bind();
        Cuda.check(cuOccupancyMaxActiveBlocksPerMultiprocessor(n, kernels.get(name).function, threads, smem),
                "reading the occupancy of " + name);
        return Math.max(1, n[0]);
    }

    /** Launches a kernel registered with {@link #add}, with a 1-d block and {@code smem} bytes of dynamic shared memory. */
    public void launch(String name, int gx, int gy, int gz, int threads, int smem, CudaStream stream, Pointer params,
                String op) {
        if (closed) {
            throw new IllegalStateException("CUDA kernels are closed");
        }
        Kernel k = kernels.get(name);
        if (smem > k.maxDynamicSmem) {
            throw new CudaException(op + ": needs " + smem + " B of shared memory per CTA, " + context.info().name()
                    + " allows " + k.maxDynamicSmem);
        }
        context.bind();
        if (timer != null) {
            timer.before(name, stream);
        }
        Cuda.check(cuLaunchKernel(k.function, gx, gy, gz, threads, 1, 1, smem, stream.stream, params, null),
                () -> "launching " + name + " for " + op);
        if (timer != null) {
            timer.after(stream);
        }
    }

    /**
     * Looks up one more kernel of the fatbin by name (no dynamic shared memory): the mask decoder's
     * ({@code DecoderKernels}) are added when a decoder is made. Call before any launch of it, and not while
     * other threads launch kernels of this object (the table is read without a lock).
     */
    public synchronized void addKernel(String name) {
        if (!kernels.containsKey(name)) {
            add(name, 0);
        }
    }

    /** Launches a kernel added with {@link #addKernel} with a 1-, 2- or 3-d block and no dynamic shared memory. */
    public void launchKernel(String name, int gx, int gy, int gz, int bx, int by, CudaStream stream, Pointer params,
                      String op) {
        if (closed) {
            throw new IllegalStateException("CUDA kernels are closed");
        }
        Kernel k = kernels.get(name);
        if (k == null) {
            throw new IllegalStateException("kernel " + name + " was not looked up (addKernel)");
        }
        context.bind();
        if (timer != null) {
            timer.before(name, stream);
        }
        Cuda.check(cuLaunchKernel(k.function, gx, gy, gz, bx, by, 1, 0, stream.stream, params, null),
                () -> "launching " + name + " for " + op);
        if (timer != null) {
            timer.after(stream);
        }
    }

    /**
     * Launches a kernel looked up by {@link #function} with a 1-d block of {@code threads} and no dynamic shared
     * memory; {@code what} names the launch in an error. Not timed by {@link #timeLaunches}.
     */
    public void launchFunction(String name, int gx, int gy, int gz, int threads, CudaStream stream, Pointer params,
                               Supplier<String> what) {
        CUfunction f = function(name);
        context.bind();
        Cuda.check(cuLaunchKernel(f, gx, gy, gz, threads, 1, 1, 0, stream.stream, params, null), what);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            context.bind();
            Cuda.check(cuModuleUnload(module), "unloading the CUDA kernels");
        }
    }
}
