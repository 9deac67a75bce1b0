package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.sam3.FeatureMap;
import java.util.function.IntFunction;

/**
 * The bookkeeping of a ring of equal device slots that hold one kind of feature map (a neck level, the fusion
 * memory) so that the next part reads it in place: {@link #acquire} hands out a slot as a {@link Resident} map. When
 * every slot is held, the least recently acquired map is spilled first (its values brought back to the CPU through
 * {@code download}, where it keeps answering), so a map never reads another frame's values and a ring never grows; a
 * {@link Resident#release released} map frees its slot without a copy. How many slots a ring has bounds the frames
 * whose features stay on the device at once (streams stepping side by side), not correctness.
 *
 * <p>Not thread-safe on its own: every call, the maps' included, must hold {@code lock} (the owner's monitor, which
 * also guards the stream that {@code download} uses).
 */
final class FeatureRing {
    private final String name;
    private final long length;
    private final Object lock;
    /** Brings back the values of slot i (a synchronous device-to-host copy). */
    private final IntFunction<float[]> download;
    private final Resident[] holders;
    private long acquisitions;
    private long spills;

    FeatureRing(String name, int slots, long length, Object lock, IntFunction<float[]> download) {
        if (slots < 1) {
            throw new IllegalArgumentException(name + ": " + slots + " slots (at least 1)");
        }
        this.name = name;
        this.length = length;
        this.lock = lock;
        this.download = download;
        this.holders = new Resident[slots];
    }

    /**
     * A free slot as a new map (the caller then fills slot {@link Resident#slot()}); when none is free, the oldest
     * held map is spilled to the CPU first.
     */
    Resident acquire() {
        assert Thread.holdsLock(lock);
        int slot = -1;
        for (int i = 0; i < holders.length && slot < 0; i++) {
            if (holders[i] == null) {
                slot = i;
            }
        }
        if (slot < 0) {
            slot = 0;
            for (int i = 1; i < holders.length; i++) {
                if (holders[i].order < holders[slot].order) {
                    slot = i;
                }
            }
            holders[slot].spill();
            spills++;
        }
        Resident r = new Resident(slot, acquisitions++);
        holders[slot] = r;
        return r;
    }

    /** The slots held now. */
    int held() {
        synchronized (lock) {
            int n = 0;
            for (Resident r : holders) {
                n += r == null ? 0 : 1;
            }
            return n;
        }
    }

    /** Maps spilled to the CPU so far because every slot was held. */
    long spills() {
        synchronized (lock) {
            return spills;
        }
    }

    int slots() {
        return holders.length;
    }

    /** A map in a slot of this ring, until it is spilled or released. */
    final class Resident implements FeatureMap {
        private final int slot;
        private final long order;
        /** The values on the CPU, once brought back. */
        private float[] host;
        private boolean inSlot = true;
        private boolean released;

        private Resident(int slot, long order) {
            this.slot = slot;
            this.order = order;
        }

        /** The slot whose device buffer holds the values while {@link #resident}. */
        int slot() {
            return slot;
        }

        /** Whether the values are still in the slot (the caller holds the lock). */
        boolean resident() {
            assert Thread.holdsLock(lock);
            return inSlot;
        }

        /** The object that owns the ring (its monitor guards it): whose buffers hold the values. */
        Object owner() {
            return lock;
        }

        /** Whether this map is one of {@code ring}'s (that ring's buffers can be read). */
        boolean of(FeatureRing ring) {
            return ring == FeatureRing.this;
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public float[] values() {
            synchronized (lock) {
                if (host == null) {
                    if (!inSlot) {
                        throw new IllegalStateException(name + " read after it was released");
                    }
                    host = download.apply(slot);
                }
                return host;
            }
        }

        /** Brings the values back (unless they are) and leaves the slot. */
        private void spill() {
            if (host == null) {
                host = download.apply(slot);
            }
            inSlot = false;
        }

        @Override
        public void release() {
            synchronized (lock) {
                if (released) {
                    return;
                }
                released = true;
                if (inSlot) {
                    inSlot = false;
                    holders[slot] = null;
                }
            }
        }
    }
}
