package io.samstream.stream.track;

import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;

/** A test backend that only decodes (each test says how); the tracker and the waves need no encoder. */
public abstract class DecodeOnlyBackend implements SamBackend {
    private final SamConfig config;
    private final String name;

    protected DecodeOnlyBackend(SamConfig config, String name) {
        this.config = config;
        this.name = name;
    }

    @Override
    public SamConfig config() {
        return config;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Tensor encode(Tensor images) {
        throw new UnsupportedOperationException(name + " only decodes");
    }
}
