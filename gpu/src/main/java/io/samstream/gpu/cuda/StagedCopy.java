package io.samstream.gpu.cuda;

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
        int chunk = (int) Math.min(staging.bytes() / 2, 1 << 24);
        for (int start = 0; start < out.length; start += chunk) {
            int n = Math.min(chunk, out.length - start);
            stream.download(src, (long) start * 2, staging, 0, (long) n * 2);
            stream.synchronize();
            Bf16.get(staging.buffer().asShortBuffer(), 0, out, start, n);
        }
        return out;
    }
}
