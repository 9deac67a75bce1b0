package io.samstream.gpu.cuda.kernels;

import java.nio.ByteBuffer;

import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.Fp8GemmKernels.Fp8Weight;
import io.samstream.gpu.fp8.Fp8Rows;

/**
 * Quantizes a Linear weight {@code [out, in]} to e4m3 with one scale per output channel ({@link Fp8Rows#quantizeWeight})
 * and copies it to the device as an {@link Fp8Weight}: the bytes as they are, the scales as little-endian fp32.
 * Synchronous, through a pinned staging buffer (weights are uploaded once, at load).
 */
public final class Fp8WeightUpload {
    private Fp8WeightUpload() {}

    public static Fp8Weight upload(float[] w, int out, int in, DeviceMemoryPool pool, CudaStream stream,
                                   PinnedBuffer staging, String what) {
        Fp8Rows q = Fp8Rows.quantizeWeight(w, out, in, what);
        byte[] values = q.values();
        DeviceBuffer v = pool.allocate(values.length, what + " (e4m3)");
        int chunk = (int) Math.min(staging.bytes(), 1 << 24);
        for (int start = 0; start < values.length; start += chunk) {
            int n = Math.min(chunk, values.length - start);
            staging.buffer().put(values, start, n);
            stream.upload(staging, 0, v, start, n);
            stream.synchronize();
        }
        float[] scales = q.scales();
        DeviceBuffer s = pool.allocate((long) scales.length * 4, what + " (e4m3 scales)");
        int words = (int) Math.min(staging.bytes() / 4, 1 << 22);
        for (int start = 0; start < scales.length; start += words) {
            int n = Math.min(words, scales.length - start);
            ByteBuffer buf = staging.buffer();
            for (int i = 0; i < n; i++) {
                buf.putFloat(scales[start + i]);
            }
            stream.upload(staging, 0, s, (long) start * 4, (long) n * 4);
            stream.synchronize();
        }
        return new Fp8Weight(v, s, out, in);
    }
}
