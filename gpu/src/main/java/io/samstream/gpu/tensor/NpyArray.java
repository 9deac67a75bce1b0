package io.samstream.gpu.tensor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A C-ordered array as a NumPy {@code .npy} file holds it: a dtype, a shape and the raw little-endian
 * bytes. Conversions to Java arrays happen on request, so a reader does not need to know the dtype in
 * advance to get floats out ({@link #toFloats()} accepts every supported dtype).
 *
 * <p>Supported dtypes (NumPy's {@code descr} strings): {@code <f2 <f4 <f8 <i4 <i8 |u1 |b1}. Big-endian files
 * are converted to little-endian when read.
 */
public final class NpyArray {
    /** The descr strings this class holds, all little-endian or byte-sized. */
    public static final String FLOAT16 = "<f2";
    public static final String FLOAT32 = "<f4";
    public static final String FLOAT64 = "<f8";
    public static final String INT32 = "<i4";
    public static final String INT64 = "<i8";
    public static final String UINT8 = "|u1";
    public static final String BOOL = "|b1";

    private final String dtype;
    private final int[] shape;
    private final byte[] raw;

    /** @param raw little-endian data of {@code shape} elements of {@code dtype}; kept, not copied */
    public NpyArray(String dtype, int[] shape, byte[] raw) {
        int itemSize = itemSize(dtype);
        long n = Tensor.numel(shape);
        if (n * itemSize != raw.length) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " of " + dtype + " needs "
                    + n * itemSize + " bytes, got " + raw.length);
        }
        this.dtype = dtype;
        this.shape = shape.clone();
        this.raw = raw;
    }

    public static NpyArray ofFloat32(Tensor tensor) {
        return ofFloat32(tensor.data(), tensor.shape());
    }

    public static NpyArray ofFloat32(float[] data, int... shape) {
        ByteBuffer b = ByteBuffer.allocate(Math.multiplyExact(data.length, 4)).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(data);
        return new NpyArray(FLOAT32, shape, b.array());
    }

    /** Unsigned bytes: each {@code byte} is read as 0..255. The array is kept, not copied. */
    public static NpyArray ofUint8(byte[] data, int... shape) {
        return new NpyArray(UINT8, shape, data);
    }

    public static NpyArray ofBool(boolean[] data, int... shape) {
        byte[] b = new byte[data.length];
        for (int i = 0; i < data.length; i++) {
            b[i] = (byte) (data[i] ? 1 : 0);
        }
        return new NpyArray(BOOL, shape, b);
    }

    /** Bytes per element of a supported dtype. */
    public static int itemSize(String dtype) {
        return switch (dtype) {
            case UINT8, BOOL -> 1;
            case FLOAT16 -> 2;
            case FLOAT32, INT32 -> 4;
            case FLOAT64, INT64 -> 8;
            default -> throw new IllegalArgumentException("unsupported dtype '" + dtype
                    + "' (supported: <f2 <f4 <f8 <i4 <i8 |u1 |b1)");
        };
    }

    public String dtype() {
        return dtype;
    }

    public int[] shape() {
        return shape.clone();
    }

    public long size() {
        return Tensor.numel(shape);
    }

    /** The little-endian data bytes, shared, not copied. */
    public byte[] raw() {
        return raw;
    }

    /** Every element as a float: halves widened, doubles and 64-bit ints rounded, bools as 0 and 1. */
    public float[] toFloats() {
        int n = (int) size();
        float[] out = new float[n];
        ByteBuffer b = buffer();
        switch (dtype) {
            case FLOAT32 -> b.asFloatBuffer().get(out);
            case FLOAT16 -> {
                for (int i = 0; i < n; i++) {
                    out[i] = HalfFloats.halfToFloat(b.getShort(i * 2));
                }
            }
            case FLOAT64 -> {
                for (int i = 0; i < n; i++) {
                    out[i] = (float) b.getDouble(i * 8);
                }
            }
            case INT32 -> {
                for (int i = 0; i < n; i++) {
                    out[i] = b.getInt(i * 4);
                }
            }
            case INT64 -> {
                for (int i = 0; i < n; i++) {
                    out[i] = b.getLong(i * 8);
                }
            }
            case UINT8, BOOL -> {
                for (int i = 0; i < n; i++) {
                    out[i] = raw[i] & 0xFF;
                }
            }
            default -> throw new IllegalStateException(dtype);
        }
        return out;
    }

    /** The data as an fp32 {@link Tensor} of this shape (see {@link #toFloats()}). */
    public Tensor toTensor() {
        return new Tensor(toFloats(), shape);
    }

    /** Every element as a long; floating-point dtypes are refused rather than truncated. */
    public long[] toLongs() {
        int n = (int) size();
        long[] out = new long[n];
        ByteBuffer b = buffer();
        switch (dtype) {
            case INT32 -> {
                for (int i = 0; i < n; i++) {
                    out[i] = b.getInt(i * 4);
                }
            }
            case INT64 -> b.asLongBuffer().get(out);
            case UINT8, BOOL -> {
                for (int i = 0; i < n; i++) {
                    out[i] = raw[i] & 0xFF;
                }
            }
            default -> throw new IllegalStateException("dtype " + dtype + " is not an integer type");
        }
        return out;
    }

    /** Every element tested for being non-zero (NumPy's {@code astype(bool)}). */
    public boolean[] toBooleans() {
        int n = (int) size();
        boolean[] out = new boolean[n];
        if (itemSize(dtype) == 1) {
            for (int i = 0; i < n; i++) {
                out[i] = raw[i] != 0;
            }
            return out;
        }
        if (dtype.equals(FLOAT64)) {
            ByteBuffer b = buffer();
            for (int i = 0; i < n; i++) {
                out[i] = b.getDouble(i * 8) != 0.0; // NaN is true, as in NumPy
            }
            return out;
        }
        if (dtype.charAt(1) == 'f') {
            float[] f = toFloats(); // exact for halves and floats
            for (int i = 0; i < n; i++) {
                out[i] = f[i] != 0f;
            }
            return out;
        }
        long[] l = toLongs();
        for (int i = 0; i < n; i++) {
            out[i] = l[i] != 0;
        }
        return out;
    }

    private ByteBuffer buffer() {
        return ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public String toString() {
        return "NpyArray[" + dtype + " " + Arrays.toString(shape) + "]";
    }
}
