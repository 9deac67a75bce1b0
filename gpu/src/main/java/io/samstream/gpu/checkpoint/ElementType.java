package io.samstream.gpu.checkpoint;

import io.samstream.gpu.tensor.HalfFloats;
import java.nio.ByteBuffer;

/**
 * The element types a checkpoint may store. Only the floating point ones can become model weights;
 * the others are known so that a file holding them gets an error naming the tensor and its type
 * rather than "unknown storage". complex64 tensors are read as float32 ones with a trailing dimension of 2
 * (torch's {@code view_as_real}), which the unpickler sets up.
 */
enum ElementType {
    FLOAT64("float64", 8, true),
    FLOAT32("float32", 4, true),
    FLOAT16("float16", 2, true),
    BFLOAT16("bfloat16", 2, true),
    INT64("int64", 8, false),
    INT32("int32", 4, false),
    INT16("int16", 2, false),
    INT8("int8", 1, false),
    UINT8("uint8", 1, false),
    BOOL("bool", 1, false),
    /** (real, imaginary) float32 pairs, e.g. SAM 3's rotary tables; read as float32 with a trailing dimension 2. */
    COMPLEX64("complex64", 8, false);

    private final String displayName;
    private final int byteSize;
    private final boolean floatingPoint;

    ElementType(String displayName, int byteSize, boolean floatingPoint) {
        this.displayName = displayName;
        this.byteSize = byteSize;
        this.floatingPoint = floatingPoint;
    }

    int byteSize() {
        return byteSize;
    }

    boolean isFloatingPoint() {
        return floatingPoint;
    }

    /**
     * Decodes {@code count} values from {@code src} (whose byte order is already set) into
     * {@code dst[dstOffset...]} as fp32. fp16 and bf16 widen exactly; fp64 rounds to nearest.
     */
    void decode(ByteBuffer src, float[] dst, int dstOffset, int count) {
        switch (this) {
            case FLOAT32 -> src.asFloatBuffer().get(dst, dstOffset, count);
            case FLOAT16 -> {
                for (int i = 0; i < count; i++) {
                    dst[dstOffset + i] = HalfFloats.halfToFloat(src.getShort(src.position() + 2 * i));
                }
            }
            case BFLOAT16 -> {
                for (int i = 0; i < count; i++) {
                    dst[dstOffset + i] = HalfFloats.bfloat16ToFloat(src.getShort(src.position() + 2 * i));
                }
            }
            case FLOAT64 -> {
                for (int i = 0; i < count; i++) {
                    dst[dstOffset + i] = (float) src.getDouble(src.position() + 8 * i);
                }
            }
            default -> throw new IllegalStateException(displayName + " values are not floating point");
        }
        src.position(src.position() + count * byteSize);
    }

    @Override
    public String toString() {
        return displayName;
    }
}
