package io.samstream.gpu.cpu;

import io.samstream.gpu.checkpoint.StateDict;

/**
 * The mask decoder's {@code MLP}: linear layers with ReLU between them (not after the last), no sigmoid.
 * Used for the hypernetworks that turn mask tokens into mask weights and for the IoU head.
 */
public final class Mlp {
    private final Linear[] layers;

    private Mlp(Linear[] layers) {
        this.layers = layers;
    }

    /** Loads {@code prefix.layers.i} for i in [0, depth): in -> hidden -> ... -> hidden -> out. */
    public static Mlp load(StateDict sd, String prefix, int in, int hidden, int out, int depth) {
        Linear[] layers = new Linear[depth];
        for (int i = 0; i < depth; i++) {
            int a = i == 0 ? in : hidden;
            int b = i == depth - 1 ? out : hidden;
            layers[i] = Linear.load(sd, prefix + ".layers." + i, a, b);
        }
        return new Mlp(layers);
    }

    public float[] forward(CpuThreadPool pool, float[] x, int rows) {
        float[] h = x;
        for (int i = 0; i < layers.length; i++) {
            h = layers[i].forward(pool, h, rows);
            if (i < layers.length - 1) {
                CpuOps.relu(h, h.length);
            }
        }
        return h;
    }
}
