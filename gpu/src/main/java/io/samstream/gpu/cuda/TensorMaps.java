package io.samstream.gpu.cuda;

import java.util.LinkedHashMap;
import java.util.Map;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;

/**
 * Tensor maps (the 128-byte {@code CUtensorMap} descriptors that the Hopper tensor memory accelerator copies by)
 * for the TMA GEMM ({@code gemm_sm90_tma.cuh}), made with the driver's {@code cuTensorMapEncodeTiled}. JCuda 12.6
 * does not bind that function, so it is called through JNA on the same {@code libcuda} JCuda uses; everything
 * else stays on JCuda. A map is passed to the kernel by value (its bytes are a kernel parameter), so maps are
 * plain {@code byte[]}s here, cached per (address, shape, box): the encoder's buffers never move, and CUDA graphs
 * capture the bytes at capture time.
 *
 * <p>Maps describe a row-major bf16 matrix {@code [rows, cols]} read in boxes of {@code boxRows x 64} elements
 * with the 128-byte swizzle (the layout the wgmma descriptors of gemm_sm90.cuh read); elements outside the
 * matrix are read as zeros.
 */
public final class TensorMaps {
    /** The columns of a box: 64 bf16 = 128 bytes, the width of the 128-byte swizzle. */
    public static final int BOX_COLS = 64;
    private static final int MAP_BYTES = 128;
    private static final int CACHE_ENTRIES = 512;
    // CUtensorMapDataType / Interleave / Swizzle / L2promotion / FloatOOBfill values (cuda.h).
    private static final int UINT8 = 0, UINT32 = 2, BFLOAT16 = 9, INTERLEAVE_NONE = 0, SWIZZLE_NONE = 0, SWIZZLE_128B = 3,
            L2_PROMOTION_256B = 3, OOB_FILL_ZEROS = 0;

    /** The one driver entry point needed here (libcuda's C signature, CUresult as int). */
    interface Driver extends Library {
        int cuTensorMapEncodeTiled(com.sun.jna.Pointer tensorMap, int dataType, int rank, long globalAddress,
                                   long[] globalDim, long[] globalStrides, int[] boxDim, int[] elementStrides,
                                   int interleave, int swizzle, int l2Promotion, int oobFill);
    }

    private record Key(long address, int dataType, long rows, long cols, int boxRows, int boxCols) {}

    private final Driver driver;
    private final Memory scratch = new Memory(MAP_BYTES + 64);   // CUtensorMap is 64-byte aligned
    private final Map<Key, byte[]> cache = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Key, byte[]> eldest) {
            return size() > CACHE_ENTRIES;
        }
    };

    private TensorMaps(Driver driver) {
        this.driver = driver;
    }

    /**
     * Binds {@code cuTensorMapEncodeTiled} in the driver library. Fails with a {@link CudaException} that says
     * why (no libcuda on the library path, a driver older than CUDA 12.0) when it cannot.
     */
    static TensorMaps open() {
        Throwable last = null;
        for (String name : new String[] {"cuda", "libcuda.so.1"}) {
            try {
                return new TensorMaps(Native.load(name, Driver.class));   // the symbol resolves at the first call
            } catch (LinkageError e) {   // no such library, or JNA's own native part cannot load here
                last = e;
            }
        }
        throw new CudaException("cannot bind cuTensorMapEncodeTiled through JNA (needed by the TMA GEMM): " + last);
    }

    /**
     * The map of a row-major bf16 {@code [rows, cols]} matrix in {@code buffer}, boxes of {@code boxRows x 64}. No
     * driver call on a cache hit (the encoder's maps are made once); safe to call while a CUDA graph is being
     * captured (encoding is host-only) and from several threads.
     */
    public synchronized byte[] bf16RowMajor(DeviceBuffer buffer, long rows, long cols, int boxRows, String what) {
        if (cols % 8 != 0) {
            throw new IllegalArgumentException(what + ": a tensor map needs rows of a multiple of 16 bytes, " + cols
                    + " bf16 is not");
        }
        if (boxRows < 1 || boxRows > 256) {
            throw new IllegalArgumentException(what + ": box of " + boxRows + " rows (1 to 256)");
        }
        if (buffer.bf16Capacity() < rows * cols) {
            throw new IllegalArgumentException(what + ": " + buffer + " holds " + buffer.bf16Capacity() + " bf16, the map"
                    + " covers " + rows + " x " + cols);
        }
        return map(buffer, BFLOAT16, rows, cols, boxRows, BOX_COLS, what);
    }

    /**
     * The map of a row-major 8-bit {@code [rows, cols]} matrix (the FP8 GEMM's e4m3 operands), boxes of
     * {@code boxRows x 128} elements with the 128-byte swizzle: the same bytes per box row, and so the same
     * shared-memory layout, as {@link #bf16RowMajor}'s 64 bf16. {@code cols} a multiple of 16 (16-byte rows). Cached
     * and thread-safe like {@link #bf16RowMajor}.
     */
    public synchronized byte[] u8RowMajor(DeviceBuffer buffer, long rows, long cols, int boxRows, String what) {
        if (cols % 16 != 0) {
            throw new IllegalArgumentException(what + ": a tensor map needs rows of a multiple of 16 bytes, " + cols
                    + " bytes is not");
        }
        if (boxRows < 1 || boxRows > 256) {
            throw new IllegalArgumentException(what + ": box of " + boxRows + " rows (1 to 256)");
        }
        if (buffer.bytes() < rows * cols) {
            throw new IllegalArgumentException(what + ": " + buffer + " holds " + buffer.bytes() + " bytes, the map"
                    + " covers " + rows + " x " + cols + " u8");
        }
        return map(buffer, UINT8, rows, cols, boxRows, 2 * BOX_COLS, what);
    }

    /**
     * The map of a row-major u32 {@code [rows, cols]} matrix in {@code buffer} (the 2:4 GEMM's metadata words), boxes
     * of {@code boxRows x boxCols} copied as they are (no swizzle); {@code cols} and {@code boxCols} multiples of 4
     * (16-byte rows). Cached and thread-safe like {@link #bf16RowMajor}.
     */
    public synchronized byte[] u32RowMajor(DeviceBuffer buffer, long rows, long cols, int boxRows, int boxCols, String what) {
        if (cols % 4 != 0 || boxCols % 4 != 0 || boxCols < 4 || boxCols > 256) {
            throw new IllegalArgumentException(what + ": a u32 tensor map needs rows and boxes of a multiple of 16 bytes"
                    + " (at most 256 words), not " + cols + " / " + boxCols + " words");
        }
        if (boxRows < 1 || boxRows > 256) {
            throw new IllegalArgumentException(what + ": box of " + boxRows + " rows (1 to 256)");
        }
        if (buffer.bytes() < rows * cols * 4) {
            throw new IllegalArgumentException(what + ": " + buffer + " holds " + buffer.bytes() + " bytes, the map"
                    + " covers " + rows + " x " + cols + " u32");
        }
        return map(buffer, UINT32, rows, cols, boxRows, boxCols, what);
    }

    private byte[] map(DeviceBuffer buffer, int dataType, long rows, long cols, int boxRows, int boxCols, String what) {
        long address = buffer.address();
        if (address % 16 != 0) {
            throw new IllegalArgumentException(what + ": a tensor map needs a 16-byte aligned address, " + buffer
                    + " is at 0x" + Long.toHexString(address));
        }
        Key key = new Key(address, dataType, rows, cols, boxRows, boxCols);
        byte[] map = cache.get(key);
        if (map == null) {
            map = encode(address, dataType, rows, cols, boxRows, boxCols, what);
            cache.put(key, map);
        }
        return map;
    }

    private byte[] encode(long address, int dataType, long rows, long cols, int boxRows, int boxCols, String what) {
        com.sun.jna.Pointer aligned = scratch.align(64);
        boolean swizzled = dataType != UINT32;
        int elementBytes = dataType == UINT8 ? 1 : dataType == BFLOAT16 ? 2 : 4;
        String type = dataType == UINT8 ? " u8" : dataType == BFLOAT16 ? " bf16" : " u32";
        int r;
        try {
            // bf16 / u8 tiles with the 128-byte swizzle the wgmma descriptors read; u32 metadata as it is in memory.
            r = driver.cuTensorMapEncodeTiled(aligned, dataType, 2, address, new long[] {cols, rows},
                    new long[] {cols * elementBytes}, new int[] {boxCols, boxRows}, new int[] {1, 1}, INTERLEAVE_NONE,
                    swizzled ? SWIZZLE_128B : SWIZZLE_NONE, L2_PROMOTION_256B, OOB_FILL_ZEROS);
        } catch (UnsatisfiedLinkError e) {
            throw new CudaException("the CUDA driver has no cuTensorMapEncodeTiled (a driver older than CUDA 12.0?): " + e);
        }
        Cuda.check(r, () -> "encoding the tensor map of " + what + " (" + rows + " x " + cols + type
                + ", box " + boxRows + " x " + boxCols + ")");
        return aligned.getByteArray(0, MAP_BYTES);
    }

}
