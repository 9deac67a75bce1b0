package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.cuda.kernels.GemmKernels;
import io.samstream.gpu.sam2.FrameFeatures;
import io.samstream.gpu.sam3.FeatureMap;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import io.samstream.gpu.sam3.video.Sam3TrackerModel;
import io.samstream.gpu.sam3.video.TrackerFrame;
import java.util.Arrays;

/**
 * The SAM 3 tracker's features of a frame made on the device ({@link CudaSam3Tracker#features}): from a {@link
 * CudaSam3} tracker neck's levels still in their slots on the same GPU, the 1x level copied and the decoder's {@code
 * conv_s0} / {@code conv_s1} run as GEMMs (bf16, fp32 accumulation) into one of {@value #FRAMES} frame slots
 * ([top | s0 | s1], bf16), which the frame's passes read in place. A frame's values come back to the host only when
 * the CPU asks (a new object's pointer) or when every slot is held (the oldest first, {@link FeatureRing}). Needs the
 * width to be a multiple of 64 (conv_s0's width / 8 outputs a multiple of 8 for the GEMM; Meta's 256 is); otherwise
 * {@link #make} declines and the caller runs the CPU reference's convolutions.
 *
 * <p>Not thread-safe on its own: every call, the frames' included, must hold {@code lock} (the tracker's monitor,
 * which also guards {@code stream}).
 */
final class TrackerFeatures {
    /** Frames whose features stay on the device at once: streams stepping side by side. */
    static final int FRAMES = 4;

    private final Sam3TrackerConfig config;
    private final Sam3TrackerModel cpu;
    private final CudaStream stream;
    private final Object lock;
    private final GemmKernels gemm;
    /** conv_s0 / conv_s1 as linear layers; null when the width does not allow the GEMMs. */
    private final DeviceWeights.Bf16 convS0, convS1;
    private final DeviceBuffer[] slots = new DeviceBuffer[FRAMES];
    private final FeatureRing frames;

    TrackerFeatures(StateDict sd, Sam3TrackerConfig config, Sam3TrackerModel cpu, CudaKernels kernels,
            CudaStream stream, PinnedBuffer staging, DeviceMemoryPool pool, Object lock) {
        this.config = config;
        this.cpu = cpu;
        this.stream = stream;
        this.lock = lock;
        this.gemm = GemmKernels.of(kernels);
        int c = config.hidden();
        boolean convs = c % 64 == 0;
        DeviceWeights up = new DeviceWeights(pool, stream, staging);
        this.convS0 = convs ? up.linearBf16(sd, "sam_mask_decoder.conv_s0", c, c / 8) : null;
        this.convS1 = convs ? up.linearBf16(sd, "sam_mask_decoder.conv_s1", c, c / 4) : null;
        long values = frameValues(config);
        for (int i = 0; i < FRAMES; i++) {
            slots[i] = pool.allocateBf16(values, "SAM 3 tracker frame features (slot " + i + ")");
        }
        this.frames = new FeatureRing("SAM 3 tracker frame features", FRAMES, values, lock,
                i -> StagedCopy.downloadBf16(stream, staging, slots[i], values));
    }

    /** Values of a frame slot: top [g², c], s0 [16 g², c / 8], s1 [4 g², c / 4], each g² c. */
    static long frameValues(Sam3TrackerConfig c) {
        return 4L * c.grid() * c.grid() * c.hidden();
    }

    /** Pool bytes: the two convolutions' weights and biases, and the frame slots. */
    static long poolBytes(Sam3TrackerConfig c) {
        long h = c.hidden();
        long convs = align(h * (h / 8) * 2) + align(h / 8 * 2) + align(h * (h / 4) * 2) + align(h / 4 * 2);
        return convs + FRAMES * align(frameValues(c) * 2);
    }

    /**
     * The frame of {@code levels} (checked by the caller) made on the device, or null, with nothing queued, when they
     * are not a {@link CudaSam3} tracker neck's still in their slots on this GPU or the width does not allow it.
     */
    TrackerFrame make(FeatureMap[] levels) {
        assert Thread.holdsLock(lock);
        if (convS0 == null || !(levels[0] instanceof FeatureRing.Resident r && r.owner() instanceof CudaSam3 producer)) {
            return null;
        }
        int g = config.grid(), c = config.hidden();
        FeatureRing.Resident map = frames.acquire();
        DeviceBuffer slot = slots[map.slot()];
        boolean queued = producer.readTrackerLevels(levels, stream, l -> {
            stream.copy(l[2], part(slot, 0), (long) g * g * c * 2);
            gemm.run(stream, l[0], convS0.w(), convS0.b(), null, part(slot, 1), 16 * g * g, c / 8, c, false);
            gemm.run(stream, l[1], convS1.w(), convS1.b(), null, part(slot, 2), 4 * g * g, c / 4, c, false);
        });
        if (!queued) {
            map.release();
            return null;
        }
        return new DeviceFrame(map);
    }

    /**
     * Queues the copy of {@code frame}'s features into the buffers the passes read, when it is one of these frames
     * still in its slot; false (nothing queued) otherwise.
     */
    boolean copy(TrackerFrame frame, DeviceBuffer top, DeviceBuffer s0, DeviceBuffer s1) {
        assert Thread.holdsLock(lock);
        if (!(frame instanceof DeviceFrame d && d.owner() == this && d.map.resident())) {
            return false;
        }
        DeviceBuffer slot = slots[d.map.slot()];
        long bytes = (long) config.grid() * config.grid() * config.hidden() * 2;
        stream.copy(part(slot, 0), top, bytes);
        stream.copy(part(slot, 1), s0, 2 * bytes);
        stream.copy(part(slot, 2), s1, bytes);
        return true;
    }

    /** Part {@code i} of a frame slot (0: top, 1: s0, 2: s1, as {@link #frameValues} lays them out). */
    private DeviceBuffer part(DeviceBuffer slot, int i) {
        long bytes = (long) config.grid() * config.grid() * config.hidden() * 2;
        long[] at = {0, bytes, 3 * bytes};
        long[] size = {bytes, 2 * bytes, bytes};
        return slot.slice(at[i], size[i], "frame features part " + i);
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }

    /** A frame made in one of these slots. */
    private final class DeviceFrame implements TrackerFrame {
        private final FeatureRing.Resident map;
        private FrameFeatures host;

        DeviceFrame(FeatureRing.Resident map) {
            this.map = map;
        }

        TrackerFeatures owner() {
            return TrackerFeatures.this;
        }

        @Override
        public FrameFeatures host() {
            synchronized (lock) {
                if (host == null) {
                    float[] v = map.values();
                    int n = config.grid() * config.grid() * config.hidden();
                    host = new FrameFeatures(Arrays.copyOfRange(v, 0, n), cpu.topPosition(),
                            Arrays.copyOfRange(v, n, 3 * n), Arrays.copyOfRange(v, 3 * n, 4 * n), config.grid());
                }
                return host;
            }
        }

        @Override
        public void release() {
            map.release();
        }
    }
}
