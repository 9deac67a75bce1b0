package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.StagedCopy;
import io.samstream.gpu.sam3.FeatureMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link CudaSam3Tracker}'s memories on the device: a fixed number of [grid², memDim] bf16 slots in the tracker's
 * pool, who holds which is {@link MemorySlots}'s. {@link #keep} copies a new memory into a free slot and hands out a
 * {@link DeviceMemory} handle; with every slot taken it downloads the memory and hands out a host one ({@link
 * FeatureMap#of}): slower, never wrong, and the bank never grows (logged once; {@link #spilled}).
 *
 * <p>Device work ({@link #keep}, {@link #download}) runs on the tracker's stream under the tracker's lock; {@link
 * #release} takes only the slots' own lock, so a stream dropping memories never waits for a pass. A slot given back
 * may be overwritten by a later pass: that pass is queued after every pass that read it, on the one stream.
 */
final class MemoryBank {
    private static final Logger log = LoggerFactory.getLogger(MemoryBank.class);

    private final CudaSam3Tracker owner;
    private final CudaStream stream;
    private final PinnedBuffer staging;
    private final DeviceBuffer slotsBuffer;
    private final MemorySlots slots;
    private final int values;
    private final long slotBytes;
    private long spilled;

    /** {@code capacity} slots of {@code values} bf16 values each (0: every memory kept on the host). */
    MemoryBank(CudaSam3Tracker owner, int capacity, int values, CudaStream stream, PinnedBuffer staging,
            DeviceMemoryPool pool) {
        this.owner = owner;
        this.stream = stream;
        this.staging = staging;
        this.values = values;
        this.slotBytes = 2L * values;
        this.slots = new MemorySlots(capacity);
        this.slotsBuffer = pool.allocate(Math.max(1, capacity) * slotBytes, "SAM 3 tracker memory bank");
    }

    /** {@code memory} (bf16, {@code values} of them) into a free slot, or downloaded when the bank is full. */
    FeatureMap keep(DeviceBuffer memory) {
        DeviceMemory kept = slots.take(slot -> new DeviceMemory(owner, values, slot));
        if (kept != null) {
            stream.copy(memory, slot(kept.slot()), slotBytes);
            return kept;
        }
        if (spilled++ == 0) {
            log.warn("the SAM 3 tracker's memory bank of {} slots is full: memories are kept on the host from now on"
                    + " while it stays full (slower, same results); open the tracker with more slots", slots.capacity());
        }
        return FeatureMap.of(StagedCopy.downloadBf16(stream, staging, memory, values));
    }

    /** Whether {@code memory} is a handle of this bank (held or released). */
    boolean owns(FeatureMap memory) {
        return memory instanceof DeviceMemory d && d.owner() == owner;
    }

    /** Whether {@code d} still holds its slot. */
    boolean holds(DeviceMemory d) {
        return d.owner() == owner && slots.holds(d.slot(), d);
    }

    /** The device address of slot {@code slot}'s first byte. */
    long address(int slot) {
        return slotsBuffer.address() + slot * slotBytes;
    }

    /** Bytes of one slot. */
    long slotBytes() {
        return slotBytes;
    }

    /** A handle's values, downloaded (the device waits); a released handle is refused. */
    float[] download(DeviceMemory d) {
        if (!holds(d)) {
            throw new IllegalStateException("the values of a released memory (" + d + ")");
        }
        return StagedCopy.downloadBf16(stream, staging, slot(d.slot()), d.length());
    }

    /** A handle's slot back (once; later calls do nothing). */
    void release(DeviceMemory d) {
        slots.give(d.slot(), d);
    }

    private DeviceBuffer slot(int slot) {
        return slotsBuffer.slice(slot * slotBytes, slotBytes, "memory bank slot " + slot);
    }

    int capacity() {
        return slots.capacity();
    }

    int taken() {
        return slots.taken();
    }

    long spilled() {
        return spilled;
    }

    /** Every slot free for good: handles still held read as released. */
    void close() {
        slots.close();
    }
}
