package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.GraphCache;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.cuda.sam2.CudaMemoryEncoder;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.video.TrackerPasses;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * {@link CudaSam3Tracker}'s memories made: SAM 2.1's memory encoder ({@link CudaMemoryEncoder#forwardScaled}, one
 * object a pass, its launches in a graph) on the frame's features and an encoder input (the mask as the encoder
 * takes it, and the object's presence), the result kept in the {@link MemoryBank}. Two ways in:
 *
 * <ul>
 *   <li>{@link #fromScaledMask}: a new object's, from the caller's scaled mask ([maskSize²] fp32, uploaded; the
 *       host waits for that upload: 5.3 MB at the release shapes);</li>
 *   <li>{@link #fromLowResolution}: a tracked frame's, from the objects' low-resolution masks: they go up once
 *       ([n, lowRes²] fp32, 330 KB an object), one kernel counts every object's area before and after the
 *       pixel-wise rule ({@link TrackerPasses#SHRINK_THRESHOLD}), then per wanted object one kernel writes its
 *       encoder input (upsampled, suppressed whole when it shrank below the threshold, sigmoid x20 - 10) and its
 *       presence. The same values as the host's {@code MemoryMasks.fromTracked} up to float rounding (a pixel at
 *       the threshold of 0 may count differently).</li>
 * </ul>
 * Inputs are checked by the tracker; not thread-safe (the tracker's lock).
 */
final class TrackerMemoryEncoder {
    private final Sam3TrackerConfig config;
    private final CudaStream stream;
    private final PinnedBuffer staging;
    private final Sam2Kernels ops;
    private final GraphCache graphs;
    private final MemoryBank bank;
    private final CudaMemoryEncoder encoder;
    /** The encoder's input ([maskSize²] fp32) and presence (one fp32: above 0 present). */
    private final DeviceBuffer mask, presence;
    /** A frame's low-resolution masks ([n, lowRes²] fp32) and their areas before / after the rule ([2n] int). */
    private final DeviceBuffer lowResMasks, shrinkAreas;

    TrackerMemoryEncoder(StateDict sd, Sam3TrackerConfig config, CudaKernels kernels, CudaStream stream,
            DeviceMemoryPool pool, PinnedBuffer staging, GraphCache graphs, MemoryBank bank) {
        this.config = config;
        this.stream = stream;
        this.staging = staging;
        this.ops = Sam2Kernels.of(kernels);
        this.graphs = graphs;
        this.bank = bank;
        int s = config.maskSize(), l = config.lowResSize();
        this.mask = pool.allocate((long) s * s * 4, "SAM 3 tracker scaled mask");
        this.presence = pool.allocate(4, "SAM 3 tracker presence");
        this.lowResMasks = pool.allocate((long) Sam2Kernels.SHRINK_MAX_OBJECTS * l * l * 4,
                "SAM 3 tracker low-res masks of a frame");
        this.shrinkAreas = pool.allocate(2L * Sam2Kernels.SHRINK_MAX_OBJECTS * 4, "SAM 3 tracker shrinkage areas");
        this.encoder = new CudaMemoryEncoder(sd, config.sam2Parts(), 1, kernels, stream, pool, staging);
    }

    /** The memory of {@code scaledMask} ([maskSize²], already scaled) on the frame features {@code top}. */
    FeatureMap fromScaledMask(DeviceBuffer top, float[] scaledMask, boolean present) {
        StagedCopy.uploadF32(stream, staging, scaledMask, mask);
        StagedCopy.uploadF32(stream, staging, new float[] {present ? 1f : -1f}, presence);
        return encode(top);
    }

    /**
     * The memories of the {@code wanted} objects of a frame from all its objects' low-resolution masks (every one
     * counts in the rule), null for the others; at most {@link Sam2Kernels#SHRINK_MAX_OBJECTS} masks.
     */
    List<FeatureMap> fromLowResolution(DeviceBuffer top, float[][] lowRes, boolean[] wanted) {
        int n = lowRes.length, l = config.lowResSize(), s = config.maskSize();
        if (n > Sam2Kernels.SHRINK_MAX_OBJECTS) {
            throw new IllegalArgumentException(n + " masks; the device rule takes " + Sam2Kernels.SHRINK_MAX_OBJECTS);
        }
        List<FeatureMap> out = new ArrayList<>(Collections.nCopies(n, null));
        boolean any = false;
        for (boolean w : wanted) {
            any |= w;
        }
        if (!any) {
            return out;
        }
        float[] all = new float[n * l * l];
        for (int k = 0; k < n; k++) {
            System.arraycopy(lowRes[k], 0, all, k * l * l, l * l);
        }
        StagedCopy.uploadF32(stream, staging, all, lowResMasks);
        stream.fill16(shrinkAreas, (short) 0);
        ops.shrinkageCount(stream, lowResMasks, n, l, s, shrinkAreas);
        for (int k = 0; k < n; k++) {
            if (wanted[k]) {
                ops.scaledMaskShrunk(stream, lowResMasks, k, l, s, shrinkAreas, TrackerPasses.SHRINK_THRESHOLD, mask,
                        presence);
                out.set(k, encode(top));
            }
        }
        return out;
    }

    /** The encoder's graph on the input in place, its output kept in the bank (or downloaded, the bank full). */
    private FeatureMap encode(DeviceBuffer top) {
        graphs.run(stream, List.of("memory encoder"), () -> encoder.forwardScaled(1, top, mask, presence));
        return bank.keep(encoder.output());
    }
}
