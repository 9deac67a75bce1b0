package io.samstream.gpu.cuda.sam2;

import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.sam2.Sam2Config;
import java.util.Arrays;

/**
 * One tracked object's memory bank in device memory (a slot of {@link CudaSam2Tracker}'s banks): its slot index, its
 * conditioning frame, and the frames its ring entries hold (-1: none).
 */
final class DeviceBank {
    private static final int POINTERS = Sam2Config.MAX_OBJECT_POINTERS;

    /**
     * Where the banks are: {@code banks} holds one bank of {@code bankBytes} per slot, each its conditioning memory
     * and a ring of {@code ring} memories of {@code featureBytes}, then its conditioning pointer and a ring of
     * pointers of {@code pointerBytes}.
     */
    record Layout(DeviceBuffer banks, int ring, long featureBytes, long pointerBytes, long bankBytes) {}

    final int slot;
    final int conditioningFrame;
    final int[] featureFrame;
    final int[] pointerFrame = new int[POINTERS - 1];
    private final Layout layout;

    DeviceBank(int slot, int conditioningFrame, Layout layout) {
        this.slot = slot;
        this.conditioningFrame = conditioningFrame;
        this.layout = layout;
        this.featureFrame = new int[layout.ring()];
        Arrays.fill(featureFrame, -1);
        Arrays.fill(pointerFrame, -1);
    }

    boolean hasFeatures(int frame) {
        return frame >= 0 && featureFrame[frame % layout.ring()] == frame;
    }

    boolean hasPointer(int frame) {
        return frame >= 0 && pointerFrame[frame % (POINTERS - 1)] == frame;
    }

    /** Device address of a memory: the conditioning one, or the ring entry of a tracked frame. */
    long feature(int frame) {
        int i = frame == conditioningFrame ? 0 : 1 + frame % layout.ring();
        return layout.banks().address() + (long) slot * layout.bankBytes() + i * layout.featureBytes();
    }

    long pointer(int frame) {
        int i = frame == conditioningFrame ? 0 : 1 + frame % (POINTERS - 1);
        return layout.banks().address() + (long) slot * layout.bankBytes() + (layout.ring() + 1) * layout.featureBytes()
                + i * layout.pointerBytes();
    }
}
