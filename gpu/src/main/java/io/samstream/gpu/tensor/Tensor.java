package io.samstream.gpu.tensor;

import java.util.Arrays;

/**
 * A dense, row-major fp32 tensor: the one array type the CPU backend and the checkpoint loaders share.
 *
 * <p>Deliberately plain: a shape and a {@code float[]}. Views and strides are not supported; operations
 * that reorder data allocate. Shapes are small (at most 4 dimensions in SAM), data may be large.
 */
public final class Tensor {
    private final int[] shape;
    private final float[] data;

    public Tensor(float[] data, int... shape) {
        long n = numel(shape);
        if (n != data.length) {
            throw new IllegalArgumentException(
                    "tensor of shape " + Arrays.toString(shape) + " needs " + n + " values, got " + data.length);
        }
        this.shape = shape.clone();
        this.data = data;
    }

    public static Tensor zeros(int... shape) {
        long n = numel(shape);
        if (n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("tensor of shape " + Arrays.toString(shape) + " is too large");
        }
        return new Tensor(new float[(int) n], shape);
    }

    public static long numel(int... shape) {
        long n = 1;
        for (int d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dimension in shape " + Arrays.toString(shape));
            }
            n *= d;
        }
        return n;
    }

    /** The shape; a copy, so callers may not change this tensor through it. */
    public int[] shape() {
        return shape.clone();
    }

    public int dim(int i) {
        return shape[i < 0 ? shape.length + i : i];
    }

    public int rank() {
        return shape.length;
    }

    public int size() {
        return data.length;
    }

    /** The backing array, shared, not copied: the CPU kernels work on it in place. */
    public float[] data() {
        return data;
    }

    public boolean hasShape(int... expected) {
        return Arrays.equals(shape, expected);
    }

    /** The same data under another shape with the same number of elements. */
    public Tensor reshape(int... newShape) {
        return new Tensor(data, newShape);
    }

    public Tensor copy() {
        return new Tensor(data.clone(), shape);
    }

    public String shapeString() {
        return Arrays.toString(shape);
    }

    @Override
    public String toString() {
        return "Tensor" + shapeString();
    }
}
