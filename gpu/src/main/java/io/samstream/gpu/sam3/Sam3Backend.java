package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.CpuThreadPool;

/**
 * What runs the per-frame heavy parts of SAM 3's image path for a {@link Sam3Model}: the ViT trunk ({@link Sam3Trunk})
 * and the fusion encoder ({@link Sam3Fusion}); the necks, text encoder, geometry encoder, decoder, scoring and mask
 * head stay on the CPU reference. One object so that parts on one GPU share one context: closing the backend closes
 * both parts and whatever they share.
 */
public interface Sam3Backend extends AutoCloseable {
    Sam3Trunk trunk();

    Sam3Fusion fusion();

    /** Where the parts run, for logs and masks.json, e.g. "ViT trunk and fusion encoder on GPU (bf16)"; null: CPU. */
    default String describe() {
        return null;
    }

    @Override
    void close();

    /** Makes a model's backend from its detector weights (Meta's key names) and its configuration. */
    @FunctionalInterface
    interface Factory {
        Sam3Backend open(StateDict detectorWeights, Sam3Config config, CpuThreadPool pool);
    }

    /** Everything on the fp32 CPU reference. */
    static Factory cpu() {
        return of(Sam3Trunk.cpu(), Sam3Fusion.cpu());
    }

    /**
     * Parts that share nothing, each from its own factory (the trunk opened first; if the fusion encoder then fails,
     * the trunk is closed again). Describes itself by the parts that say where they run.
     */
    static Factory of(Sam3Trunk.Factory trunkFactory, Sam3Fusion.Factory fusionFactory) {
        return (sd, config, pool) -> {
            Sam3Trunk trunk = trunkFactory.open(sd, config.vision(), pool);
            Sam3Fusion fusion;
            try {
                fusion = fusionFactory.open(sd, config.detector(), pool);
            } catch (RuntimeException e) {
                trunk.close();
                throw e;
            }
            return new Sam3Backend() {
                @Override
                public Sam3Trunk trunk() {
                    return trunk;
                }

                @Override
                public Sam3Fusion fusion() {
                    return fusion;
                }

                @Override
                public String describe() {
                    String t = trunk.describe(), f = fusion.describe();
                    if (t == null && f == null) {
                        return null;
                    }
                    if (t != null && t.equals(f)) {
                        return "ViT trunk and fusion encoder on " + t;
                    }
                    return t == null ? "fusion encoder on " + f
                            : f == null ? "ViT trunk on " + t : "ViT trunk on " + t + ", fusion encoder on " + f;
                }

                @Override
                public void close() {
                    try {
                        fusion.close();
                    } finally {
                        trunk.close();
                    }
                }
            };
        };
    }
}
