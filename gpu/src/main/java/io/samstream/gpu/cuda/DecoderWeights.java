package io.samstream.gpu.cuda;

import io.samstream.gpu.checkpoint.StateDict;

/**
 * Uploads the prompt encoder's and mask decoder's weights into the decoder's pool, synchronously through its pinned
 * staging buffer (construction only): fp32 for the token side, bf16 for the image side's GEMMs.
 */
final class DecoderWeights {
    /** An fp32 Linear {@code [out, in]} with bias. */
    record Dense(DeviceBuffer w, DeviceBuffer b, int in, int out) {}

    /** An fp32 LayerNorm's weight and bias. */
    record Norm(DeviceBuffer g, DeviceBuffer b) {}

    private final DeviceMemoryPool pool;
    private final CudaStream stream;
    private final PinnedBuffer staging;

    DecoderWeights(DeviceMemoryPool pool, CudaStream stream, PinnedBuffer staging) {
        this.pool = pool;
        this.stream = stream;
        this.staging = staging;
    }

    DeviceBuffer f32(float[] v, String what) {
        DeviceBuffer b = pool.allocate((long) v.length * 4, what);
        staging.buffer().asFloatBuffer().put(v);
        stream.upload(staging, 0, b, 0, (long) v.length * 4);
        stream.synchronize();
        return b;
    }

    DeviceBuffer bf16(float[] v, String what) {
        DeviceBuffer b = pool.allocateBf16(v.length, what);
        staging.putBf16(0, v);
        stream.upload(staging, 0, b, 0, (long) v.length * 2);
        stream.synchronize();
        return b;
    }

    Dense dense(StateDict sd, String name, int inDim, int outDim) {
        return new Dense(f32(sd.get(name + ".weight", outDim, inDim).data(), name + ".weight"),
                f32(sd.get(name + ".bias", outDim).data(), name + ".bias"), inDim, outDim);
    }

    /** Meta's {@code MLP}: {@code depth} Linears, ReLU between them. */
    Dense[] mlp(StateDict sd, String prefix, int inDim, int hiddenDim, int outDim, int depth) {
        Dense[] r = new Dense[depth];
        for (int i = 0; i < depth; i++) {
            r[i] = dense(sd, prefix + ".layers." + i, i == 0 ? inDim : hiddenDim, i == depth - 1 ? outDim : hiddenDim);
        }
        return r;
    }

    Norm norm(StateDict sd, String name, int dim) {
        return new Norm(f32(sd.get(name + ".weight", dim).data(), name + ".weight"),
                f32(sd.get(name + ".bias", dim).data(), name + ".bias"));
    }
}
