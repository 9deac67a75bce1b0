package io.samstream.gpu.model;

import io.samstream.gpu.tensor.Tensor;

/** An embedding held as a host tensor {@code [1, C, E, E]}: the CPU backend's, and any tensor a caller has. */
public record HostEmbedding(Tensor tensor) implements ImageEmbedding {
    public HostEmbedding {
        if (tensor == null || tensor.rank() != 4 || tensor.dim(0) != 1) {
            throw new IllegalArgumentException("an image embedding is [1, C, E, E], got "
                    + (tensor == null ? "null" : tensor.shapeString()));
        }
    }

    @Override
    public Tensor toTensor() {
        return tensor;
    }

    @Override
    public ImageEmbedding retain() {
        return this;
    }

    @Override
    public void close() {
        // garbage collected
    }
}
