package io.samstream.gpu.sam3.video;

import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.sam2.FrameFeatures;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import java.util.List;

/**
 * The tracker's passes a concept's step calls ({@link Sam3TrackerModel}; the GPU tracker will implement them too,
 * and tests script them to drive the rules with known masks).
 */
interface TrackerPasses {
    Sam3TrackerConfig config();

    /** See {@link Sam3TrackerModel#propagate}. */
    Propagation propagate(CpuThreadPool pool, FrameFeatures f, List<Sam3TrackerModel.Spatial> spatial,
            List<Sam3TrackerModel.Pointer> pointers, int pointerWindow);

    /** See {@link Sam3TrackerModel#pointerFromMask}. */
    float[] pointerFromMask(CpuThreadPool pool, FrameFeatures f, boolean[] mask);

    /** See {@link Sam3TrackerModel#encodeMemory}. */
    float[] encodeMemory(CpuThreadPool pool, FrameFeatures f, float[] scaledMask, boolean present);
}
