package io.samstream.gpu.checkpoint;

/** Copies a strided view of a storage into a new contiguous row-major array. */
final class TensorViews {
    private TensorViews() {}

    /**
     * The elements of {@code view} in row-major order. The caller has checked that the view lies
     * inside {@code storage} ({@link TensorRef#endElement()}).
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
