package io.samstream.gpu.model;

import io.samstream.gpu.tensor.Tensor;
import java.util.Objects;

/**
 * What the mask decoder returns for one prompt set: N = 3 masks with multimask output, else 1.
 *
 * <p>The IoU predictions are always on the host. The logits are either a host tensor, or left where the
 * backend computed them ({@link Logits}: the CUDA decoder keeps a wave's logits on the device, so that
 * post-processing reads the chosen planes in place and nothing crosses to the host unless asked); then
 * {@link #lowResLogits()} brings them over at the first call. Such logits can be read until the backend's
 * next {@link SamBackend#decodeWave}.
 */
public final class DecoderOutput {
    /** Logits kept by a backend: brought to the host on request. */
    public interface Logits {
        /** The logits {@code [N, L, L]} on the host. */
        Tensor download();
    }

    /** Plane {@code index} of an output's logits: one mask to post-process, wherever it lies. */
    public record Plane(DecoderOutput output, int index) {
        public Plane {
            Objects.requireNonNull(output, "output");
            if (index < 0 || index >= output.count()) {
                throw new IllegalArgumentException("plane " + index + " of an output with " + output.count() + " masks");
            }
        }

        /** The plane's logits {@code [1, L, L]} on the host (brings the output's logits over if needed). */
        public Tensor toTensor() {
            Tensor all = output.lowResLogits();
            int h = all.dim(-2);
            int w = all.dim(-1);
            if (output.count() == 1) {
                return all.rank() == 3 ? all : all.reshape(1, h, w);
            }
            float[] d = new float[h * w];
            System.arraycopy(all.data(), index * h * w, d, 0, h * w);
            return new Tensor(d, 1, h, w);
        }
    }

    private final float[] iouPredictions;
    private final int size;
    private final Logits source;
    private volatile Tensor logits;

    /**
     * @param lowResLogits mask logits {@code [N, L, L]}, L = {@link SamConfig#lowResSize()}
     * @param iouPredictions the IoU head's estimate of each mask's quality, {@code [N]}
     */
    public DecoderOutput(Tensor lowResLogits, float[] iouPredictions) {
        this.logits = Objects.requireNonNull(lowResLogits, "lowResLogits");
        this.iouPredictions = Objects.requireNonNull(iouPredictions, "iouPredictions");
        this.size = lowResLogits.dim(-1);
        this.source = null;
    }

    /** An output whose {@code [N, size, size]} logits the backend keeps ({@code source}). */
    public DecoderOutput(Logits source, int size, float[] iouPredictions) {
        this.source = Objects.requireNonNull(source, "source");
        this.iouPredictions = Objects.requireNonNull(iouPredictions, "iouPredictions");
        this.size = size;
    }

    /** A host plane {@code [1, L, L]} (or {@code [L, L]}) as an output of one mask, e.g. to post-process it. */
    public static Plane plane(Tensor lowRes, float predictedIou) {
        return new DecoderOutput(lowRes, new float[] {predictedIou}).plane(0);
    }

    /** Mask logits {@code [N, L, L]} on the host (downloaded at the first call when the backend kept them). */
    public Tensor lowResLogits() {
        Tensor t = logits;
        if (t == null) {
            synchronized (this) {
                t = logits;
                if (t == null) {
                    t = source.download();
                    logits = t;
                }
            }
        }
        return t;
    }

    /** The IoU head's estimate of each mask's quality, {@code [N]}. */
    public float[] iouPredictions() {
        return iouPredictions;
    }

    public int count() {
        return iouPredictions.length;
    }

    /** L: the side of each logit plane. */
    public int size() {
        return size;
    }

    /** Where the backend keeps the logits, or null when they were made on the host. */
    public Logits source() {
        return source;
    }

    /** Whether the logits are on the host already. */
    public boolean onHost() {
        return logits != null;
    }

    public Plane plane(int index) {
        return new Plane(this, index);
    }

    /** Every plane, in order. */
    public java.util.List<Plane> planes() {
        java.util.List<Plane> out = new java.util.ArrayList<>(count());
        for (int i = 0; i < count(); i++) {
            out.add(plane(i));
        }
        return out;
    }

    /** The plane with the highest predicted IoU (the first of equals). */
    public Plane best() {
        int best = 0;
        for (int i = 1; i < iouPredictions.length; i++) {
            if (iouPredictions[i] > iouPredictions[best]) {
                best = i;
            }
        }
        return plane(best);
    }
}
