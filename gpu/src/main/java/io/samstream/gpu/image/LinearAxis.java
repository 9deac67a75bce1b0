package io.samstream.gpu.image;

/**
 * Source indices and weights along one axis of PyTorch's {@code upsample_bilinear2d} with
 * {@code align_corners=False} and no antialiasing, in float32 as PyTorch computes them for fp32 tensors.
 *
 * <p>For output index d: {@code src = max(0, (in/out) * (d + 0.5) - 0.5)}, {@code i0 = min(floor(src), in-1)},
 * {@code i1 = i0 + 1} unless i0 is the last index, {@code l1 = clamp(src - i0, 0, 1)}, {@code l0 = 1 - l1}.
 * Equal sizes copy ({@code i0 = i1 = d}, {@code l0 = 1, l1 = 0}), as PyTorch's special case does.
 *
 * <p>{@code (in/out) * (d + 0.5) - 0.5} is one fused multiply-add, as the compiled PyTorch kernels evaluate it
 * (nvcc contracts it on CUDA, and the x86 CPU build agrees): with a separate multiply and subtract the source
 * position of scales such as 576/1080 differs in the last bit, and so do the upscaled logits.
 */
final class LinearAxis {
    final int inSize;
    final int outSize;
    final int[] i0;
    final int[] i1;
    final float[] l0;
    final float[] l1;

    private LinearAxis(int inSize, int outSize) {
        this.inSize = inSize;
        this.outSize = outSize;
        this.i0 = new int[outSize];
        this.i1 = new int[outSize];
        this.l0 = new float[outSize];
        this.l1 = new float[outSize];
    }

    static LinearAxis of(int inSize, int outSize) {
        if (inSize <= 0 || outSize <= 0) {
            throw new IllegalArgumentException("axis sizes must be positive, got " + inSize + " -> " + outSize);
        }
        LinearAxis a = new LinearAxis(inSize, outSize);
        if (inSize == outSize) {
            for (int d = 0; d < outSize; d++) {
                a.i0[d] = d;
                a.i1[d] = d;
                a.l0[d] = 1f;
                a.l1[d] = 0f;
            }
            return a;
        }
        // The scale is a float32 division: PyTorch's area_pixel_compute_scale with no explicit scale factor.
        float scale = (float) inSize / outSize;
        for (int d = 0; d < outSize; d++) {
            float src = Math.fma(scale, d + 0.5f, -0.5f);
            if (src < 0f) {
                src = 0f;
            }
            int i = Math.min((int) Math.floor(src), inSize - 1);
            float lambda = Math.min(Math.max(src - i, 0f), 1f);
            a.i0[d] = i;
            a.i1[d] = i < inSize - 1 ? i + 1 : i;
            a.l1[d] = lambda;
            a.l0[d] = 1f - lambda;
        }
        return a;
    }
}
