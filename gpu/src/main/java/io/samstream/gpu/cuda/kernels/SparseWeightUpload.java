package io.samstream.gpu.cuda.kernels;

import io.samstream.gpu.cuda.Bf16;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.SparseGemmKernels.SparseWeight;
import io.samstream.gpu.sparse.TwoFourWeights;
import java.nio.ByteBuffer;

/**
 * Copies a {@link TwoFourWeights} to the device as a {@link SparseWeight}: the kept values as bf16, the
 * metadata words as they are (little-endian u32, what the kernel's 4-byte loads read). Synchronous, through
 * a pinned staging buffer (weights are uploaded once, at load).
 */
public final class SparseWeightUpload {
    private SparseWeightUpload() {}

    public static SparseWeight upload(TwoFourWeights w, DeviceMemoryPool pool, CudaStream stream, PinnedBuffer staging,
                                      String what) {
        float[] values = w.values();
        DeviceBuffer v = pool.allocateBf16(values.length, what + " (2:4 values)");
        int chunk = (int) Math.min(staging.bytes() / 2, 1 << 24);
        for (int start = 0; start < values.length; start += chunk) {
            int n = Math.min(chunk, values.length - start);
            ByteBuffer buf = staging.buffer();
            for (int i = 0; i < n; i++) {
                buf.putShort(Bf16.fromFloat(values[start + i]));
            }
            stream.upload(staging, 0, v, (long) start * 2, (long) n * 2);
            stream.synchronize();
        }
        int[] meta = w.metadata();
        DeviceBuffer m = pool.allocate((long) meta.length * 4, what + " (2:4 metadata)");
        int words = (int) Math.min(staging.bytes() / 4, 1 << 23);
        for (int start = 0; start < meta.length; start += words) {
            int n = Math.min(words, meta.length - start);
            ByteBuffer buf = staging.buffer();
            for (int i = 0; i < n; i++) {
                buf.putInt(meta[start + i]);
            }
            stream.upload(staging, 0, m, (long) start * 4, (long) n * 4);
            stream.synchronize();
        }
        return new SparseWeight(v, m, w.rows(), w.k());
    }
}
