package io.samstream.gpu.cuda.sam3;
import io.samstream.gpu.sam3.FeatureMap;


/**
 * A memory {@link CudaSam3Tracker#encodeMemory} left in a slot of its device bank: the handle the caller's
 * {@code ObjectMemory} keeps instead of the values. Its tracker's {@link CudaSam3Tracker#propagate} copies the slot on
 * the device; anything else that asks for the values gets them downloaded ({@link #values}). {@link #release} gives
 * the slot back (once; later calls do nothing); the handle itself is the slot's holder in {@link MemorySlots}, so a
 * handle dropped without a release frees its slot when it is collected.
 */
final class DeviceMemory implements FeatureMap {
    private final CudaSam3Tracker owner;
    private final int length;
    private final int slot;

    DeviceMemory(CudaSam3Tracker owner, int length, int slot) {
        this.owner = owner;
        this.length = length;
        this.slot = slot;
    }

    CudaSam3Tracker owner() {
        return owner;
    }

    int slot() {
        return slot;
    }

    @Override
    public long length() {
        return length;
    }

    /** The slot's values downloaded (bf16, exact as fp32). */
    @Override
    public float[] values() {
        return owner.download(this);
    }

    @Override
    public void release() {
        owner.release(this);
    }

    @Override
    public String toString() {
        return "device memory of " + length + " values in slot " + slot;
    }
}
