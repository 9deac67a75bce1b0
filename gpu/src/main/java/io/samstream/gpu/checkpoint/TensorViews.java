package io.samstream.gpu.checkpoint;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;

/** Checks strided views of a storage and copies them into new contiguous row-major arrays. */
final class TensorViews {
    private TensorViews() {}

    /**
     * Refuses a view that could make a small file cost far more memory than it holds: a broadcast
     * (stride 0 over more than one element, which no SAM checkpoint has), a view that overlaps itself,
     * one with more values than a Java array holds, or one reaching past its storage of
     * {@code storageElements}.
     */
    static void check(Path file, String name, TensorRef t, long storageElements) {
        int[] size = t.size();
        long[] stride = t.stride();
        long numel = 1;
        for (int d = 0; d < size.length; d++) {
            if (size[d] > 1 && stride[d] == 0) {
                throw new CheckpointException(file, "tensor " + name + " (" + t + ") has stride 0 in dimension "
                        + d + ": a broadcast view repeating values " + size[d] + " times; SAM checkpoints hold"
                        + " none, and it would let a small file claim far more memory, so it is refused");
            }
            numel = Math.multiplyExact(numel, (long) size[d]); // at most 2^31 per dimension: no overflow yet
            if (numel > Integer.MAX_VALUE - 8) {
                throw new CheckpointException(file, "tensor " + name + " (" + t + ") has more values than one"
                        + " Java array can hold");
            }
        }
        if (numel == 0) {
            return;
        }
        // Dimensions by increasing stride: each must step past everything the smaller ones cover.
        Integer[] order = new Integer[size.length];
        for (int d = 0; d < order.length; d++) {
            order[d] = d;
        }
        Arrays.sort(order, Comparator.comparingLong(d -> stride[d]));
        long extent = 1; // elements spanned by the dimensions so far
        for (int d : order) {
            if (size[d] == 1) {
                continue;
            }
            if (stride[d] < extent) {
                throw new CheckpointException(file, "tensor " + name + " (" + t + ") has strides "
                        + Arrays.toString(stride) + " that make it overlap itself (dimension " + d + " steps "
                        + stride[d] + " elements, inside the " + extent + " the others span), so it is refused");
            }
            try {
                extent = Math.addExact(extent, Math.multiplyExact(size[d] - 1L, stride[d]));
            } catch (ArithmeticException e) {
                throw beyond(file, name, t, storageElements);
            }
        }
        if (t.offset() > storageElements || extent > storageElements - t.offset()) {
            throw beyond(file, name, t, storageElements);
        }
    }

    private static CheckpointException beyond(Path file, String name, TensorRef t, long storageElements) {
        String end;
        try {
            end = String.valueOf(t.endElement());
        } catch (ArithmeticException e) {
            end = "beyond 2^63";
        }
        return new CheckpointException(file, "tensor " + name + " (" + t + ") reaches element " + end
                + " of storage data/" + t.storage().key() + ", which holds only " + storageElements);
    }

    /**
     * The elements of {@code view} in row-major order. The caller has checked that the view lies
     * inside {@code storage} ({@link #check}).
     */
    static float[] gather(float[] storage, TensorRef view) {
        int[] size = view.size();
        long[] stride = view.stride();
        float[] out = new float[Math.toIntExact(view.numel())];
        if (out.length == 0) {
            return out;
        }
        int rank = size.length;
        if (rank == 0) {
            out[0] = storage[(int) view.offset()];
            return out;
        }
        if (view.isContiguous()) {
            System.arraycopy(storage, (int) view.offset(), out, 0, out.length);
            return out;
        }
        // Walk the outer dimensions like an odometer; copy the innermost one with its stride.
        int inner = size[rank - 1];
        long innerStride = stride[rank - 1];
        int[] index = new int[rank];
        long base = view.offset();
        int o = 0;
        while (true) {
            long p = base;
            for (int i = 0; i < inner; i++, p += innerStride) {
                out[o++] = storage[(int) p];
            }
            int d = rank - 2;
            for (; d >= 0; d--) {
                index[d]++;
                base += stride[d];
                if (index[d] < size[d]) {
                    break;
                }
                base -= stride[d] * size[d];
                index[d] = 0;
            }
            if (d < 0) {
                return out;
            }
        }
    }
}
