package io.samstream.gpu.cuda;

import java.nio.ShortBuffer;

/**
 * Synchronous copies of float arrays between the host and the device through a pinned staging buffer, in the chunks
 * it holds: stored on the device as bf16 or as fp32. For weights at load time and the per-call inputs and outputs of
 * the parts that return host arrays ({@code CudaSam2Offload}).
 */
public final class StagedCopy {
    private StagedCopy() {}

    /** {@code values} as bf16 into {@code dst} from its start. */
    public static void uploadBf16(CudaStream stream, PinnedBuffer staging, float[] values, DeviceBuffer dst) {
        int chunk = (int) Math.min(staging.bytes() / 2, 1 << 24);
        for (int start = 0; start < values.length; start += chunk) {
            int n = Math.min(chunk, values.length - start);
            staging.putBf16(0, values, start, n);
            stream.upload(staging, 0, dst, (long) start * 2, (long) n * 2);
            stream.synchronize();
        }
    }

    /** {@code values} as fp32 into {@code dst} from its start. */
    public static void uploadF32(CudaStream stream, PinnedBuffer staging, float[] values, DeviceBuffer dst) {
        int chunk = (int) Math.min(staging.bytes() / 4, 1 << 23);
        for (int start = 0; start < values.length; start += chunk) {
            int n = Math.min(chunk, values.length - start);
            staging.buffer().asFloatBuffer().put(values, start, n);
            stream.upload(staging, 0, dst, (long) start * 4, (long) n * 4);
            stream.synchronize();
        }
    }

    /** The first {@code count} fp32 values of {@code src}. */
    public static float[] downloadF32(CudaStream stream, PinnedBuffer staging, DeviceBuffer src, long count) {
        float[] out = new float[Math.toIntExact(count)];
        int chunk = (int) Math.min(staging.bytes() / 4, 1 << 23);
        for (int start = 0; start < out.length; start += chunk) {
            int n = Math.min(chunk, out.length - start);
            stream.download(src, (long) start * 4, staging, 0, (long) n * 4);
            stream.synchronize();
            staging.buffer().asFloatBuffer().get(out, start, n);
        }
        return out;
    }

    /** The first {@code count} bf16 values of {@code src}, as floats. */
    public static float[] downloadBf16(CudaStream stream, PinnedBuffer staging, DeviceBuffer src, long count) {
        float[] out = new float[Math.toIntExact(count)];
        downloadBf16Rows(stream, staging, src, out.length, 1, (values, first, rows) ->
                Bf16.get(values, 0, out, first, rows));
        return out;
    }

    /** What a caller does with each chunk of whole rows a download brings into the staging buffer. */
    @FunctionalInterface
    public interface Rows {
        /** {@code values} holds rows {@code [first, first + count)}, {@code rowValues} bf16 values each, from 0. */
        void accept(ShortBuffer values, int first, int count);
    }

    /**
     * The first {@code rows} rows of {@code rowValues} bf16 values each of {@code src}, handed to {@code consumer} chunk
     * by chunk as the staging buffer holds them, never splitting a row: for a caller that lays the values out
     * itself without a float copy of them all first.
     */
    public static void downloadBf16Rows(CudaStream stream, PinnedBuffer staging, DeviceBuffer src, int rows,
            int rowValues, Rows consumer) {
        long perChunk = Math.min(staging.bytes() / 2, 1 << 24) / rowValues;
        if (perChunk < 1) {
            throw new IllegalStateException("a staging buffer of " + staging.bytes() + " bytes cannot hold one row of "
                    + rowValues + " bf16 values");
        }
        int chunk = (int) Math.min(perChunk, rows);
        for (int first = 0; first < rows; first += chunk) {
            int n = Math.min(chunk, rows - first);
            stream.download(src, (long) first * rowValues * 2, staging, 0, (long) n * rowValues * 2);
            stream.synchronize();
            consumer.accept(staging.buffer().asShortBuffer(), first, n);
        }
    }
}
