package io.samstream.gpu.checkpoint;

import java.util.Arrays;

/**
 * A tensor described by a checkpoint's pickle: a view (offset, sizes, strides, all in elements) into a
 * storage whose bytes are read later. Keeping the description separate from the data lets the loader
 * refuse a bad file before reading any storage, and read each shared storage once.
 */
record TensorRef(StorageRef storage, ElementType dtype, long offset, int[] size, long[] stride) {

    long numel() {
        long n = 1;
        for (int s : size) {
            n *= s;
        }
        return n;
    }

    /** One past the last storage element the view touches; {@code offset} for an empty tensor; exact. */
    long endElement() {
        long last = offset;
        for (int d = 0; d < size.length; d++) {
            if (size[d] == 0) {
                return offset;
            }
            last = Math.addExact(last, Math.multiplyExact(size[d] - 1L, stride[d]));
        }
        return Math.addExact(last, 1);
    }

    /** Whether the view is laid out row-major without gaps (dimensions of size 1 may have any stride). */
    boolean isContiguous() {
        long expected = 1;
        for (int d = size.length - 1; d >= 0; d--) {
            if (size[d] != 1 && stride[d] != expected) {
                return false;
            }
            expected *= size[d];
        }
        return true;
    }

    @Override
    public String toString() {
        return dtype + Arrays.toString(size) + " in storage " + storage.key();
    }
}
