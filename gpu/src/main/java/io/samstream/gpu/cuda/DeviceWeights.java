package io.samstream.gpu.cuda;

import io.samstream.gpu.checkpoint.StateDict;

/**
 * Uploads a model part's weights into its pool, synchronously through a pinned staging buffer (construction only):
 * fp32 (the mask decoder's token side) or bf16 (what the GEMMs read), in chunks the staging buffer holds.
 */
public final class DeviceWeights {
    /** An fp32 Linear {@code [out, in]} with bias. */
    public record Dense(DeviceBuffer w, DeviceBuffer b, int in, int out) {}

    /** An fp32 LayerNorm's weight and bias. */
    public record Norm(DeviceBuffer g, DeviceBuffer b) {}

    /** A bf16 weight and bias: a Linear {@code [out, in]} (or a 1x1 convolution) for the GEMMs, or a LayerNorm. */
    public record Bf16(DeviceBuffer w, DeviceBuffer b) {}

    private final DeviceMemoryPool pool;
    private final CudaStream stream;
    private final PinnedBuffer staging;

    public DeviceWeights(DeviceMemoryPool pool, CudaStream stream, PinnedBuffer staging) {
        this.pool = pool;
        this.stream = stream;
        this.staging = staging;
    }

    public DeviceBuffer f32(float[] v, String what) {
        DeviceBuffer b = pool.allocate((long) v.length * 4, what);
        StagedCopy.uploadF32(stream, staging, v, b);
        return b;
    }

    public DeviceBuffer bf16(float[] v, String what) {
        DeviceBuffer b = pool.allocateBf16(v.length, what);
        StagedCopy.uploadBf16(stream, staging, v, b);
        return b;
    }

    public Dense dense(StateDict sd, String name, int inDim, int outDim) {
        return new Dense(f32(sd.get(name + ".weight", outDim, inDim).data(), name + ".weight"),
                f32(sd.get(name + ".bias", outDim).data(), name + ".bias"), inDim, outDim);
    }

    /** Meta's {@code MLP}: {@code depth} Linears, ReLU between them. */
    public Dense[] mlp(StateDict sd, String prefix, int inDim, int hiddenDim, int outDim, int depth) {
        Dense[] r = new Dense[depth];
        for (int i = 0; i < depth; i++) {
            r[i] = dense(sd, prefix + ".layers." + i, i == 0 ? inDim : hiddenDim, i == depth - 1 ? outDim : hiddenDim);
        }
        return r;
    }

    public Norm norm(StateDict sd, String name, int dim) {
        return new Norm(f32(sd.get(name + ".weight", dim).data(), name + ".weight"),
                f32(sd.get(name + ".bias", dim).data(), name + ".bias"));
    }

    /** A Linear {@code [out, in]} (a 1x1 convolution's {@code [out, in, 1, 1]} reads the same) and its bias, bf16. */
    public Bf16 linearBf16(StateDict sd, String name, int in, int out) {
        float[] w = sd.get(name + ".weight").data();
        if (w.length != out * in) {
            throw new IllegalArgumentException(name + ".weight has " + w.length + " values, expected " + out + " x " + in);
        }
        return new Bf16(bf16(w, name + ".weight"), bf16(sd.get(name + ".bias", out).data(), name + ".bias"));
    }

    /** A LayerNorm's weight and bias of {@code dim}, bf16. */
    public Bf16 normBf16(StateDict sd, String name, int dim) {
        return new Bf16(bf16(sd.get(name + ".weight", dim).data(), name + ".weight"),
                bf16(sd.get(name + ".bias", dim).data(), name + ".bias"));
    }
}
