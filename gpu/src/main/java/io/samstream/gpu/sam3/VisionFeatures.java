package io.samstream.gpu.sam3;

import java.util.ArrayList;
import java.util.List;

/**
 * What the image encoder gives the detector, channels-last: the ViT's map and the neck's three kept levels at 4x,
 * 2x and 1x the ViT's grid ({@code backbone_fpn}, the 0.5x level is dropped as {@code scalp=1} drops it), and the
 * sine position encoding of the 1x level, which the encoder, decoder and geometry encoder use. The maps may stay on
 * a backend's device ({@link FeatureMap}); {@link #release} lets it reuse their memory (and that of the maps made
 * from them, {@link #keep}) once the image's step is over.
 */
public final class VisionFeatures {
    private final int grid;
    private final FeatureMap trunk;
    private final FeatureMap[] fpn;
    private final float[] pos;
    /** Maps made from these features (fusion memories) that go with them. */
    private final List<FeatureMap> dependents = new ArrayList<>();

    /**
     * @param grid  the ViT's map side (72 at input 1008)
     * @param trunk [grid², embed]
     * @param fpn   fpn[0] [(4 grid)², d], fpn[1] [(2 grid)², d], fpn[2] [grid², d]
     * @param pos   [grid², d]
     */
    public VisionFeatures(int grid, FeatureMap trunk, FeatureMap[] fpn, float[] pos) {
        if (fpn.length != 3) {
            throw new IllegalArgumentException(fpn.length + " neck levels; 3 expected (4x, 2x, 1x)");
        }
        this.grid = grid;
        this.trunk = trunk;
        this.fpn = fpn.clone();
        this.pos = pos;
    }

    /** Features whose maps are all on the CPU. */
    public VisionFeatures(int grid, float[] trunk, float[][] fpn, float[] pos) {
        this(grid, FeatureMap.of(trunk), FeatureMap.of(fpn), pos);
    }

    public int grid() {
        return grid;
    }

    /** The ViT's map [grid², embed]. */
    public FeatureMap trunk() {
        return trunk;
    }

    /** Level i of the neck (0: 4x, 1: 2x, 2: 1x). */
    public FeatureMap level(int i) {
        return fpn[i];
    }

    /** The levels' values on the CPU, 4x first. */
    public float[][] fpn() {
        return FeatureMap.values(fpn);
    }

    public float[] pos() {
        return pos;
    }

    /** The 1x level: the detector's image tokens. */
    public FeatureMap tokens() {
        return fpn[2];
    }

    /** Keeps {@code map}, made from these features, until they are released. */
    public synchronized void keep(FeatureMap map) {
        dependents.add(map);
    }

    /** Nothing reads these features (or the maps kept with them) again: their device memory may be reused. */
    public void release() {
        List<FeatureMap> kept;
        synchronized (this) {
            kept = new ArrayList<>(dependents);
            dependents.clear();
        }
        trunk.release();
        for (FeatureMap m : fpn) {
            m.release();
        }
        for (FeatureMap m : kept) {
            m.release();
        }
    }
}
