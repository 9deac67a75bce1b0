package io.samstream.gpu.cuda.sam3;

import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.IntFunction;

/**
 * Which of a fixed number of slots are taken, and by whom: the bookkeeping of {@link CudaSam3Tracker}'s device memory
 * bank, apart from the device so that it can be tested anywhere. A slot is taken for a holder (the handle that
 * stands for what the slot holds) and given back by that holder alone, once; a slot whose holder the garbage
 * collector found unreachable without giving it back is reclaimed by a later {@link #take} (the safety net for
 * holders dropped without a release; explicit release is the rule). When every slot is taken, {@link #take} says so
 * (null) and the caller keeps the value elsewhere: the bank never grows.
 *
 * <p>Thread-safe: its own lock, held only for the bookkeeping (never across device work), so a stream releasing
 * memories never waits for another stream's GPU pass.
 */
final class MemorySlots {
    /** A taken slot's watch on its holder. */
    private static final class Watch extends PhantomReference<Object> {
        final int slot;

        Watch(Object holder, int slot, ReferenceQueue<Object> queue) {
            super(holder, queue);
            this.slot = slot;
        }
    }

    private final Watch[] holders;
    private final Deque<Integer> free = new ArrayDeque<>();
    private final ReferenceQueue<Object> collected = new ReferenceQueue<>();
    private int taken;
    private long reclaimed;
    private long refused;
    private boolean closed;

    MemorySlots(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("a bank of " + capacity + " slots");
        }
        this.holders = new Watch[capacity];
        for (int i = capacity - 1; i >= 0; i--) {
            free.push(i);
        }
    }

    /**
     * Takes a free slot (the most recently freed first) for the holder {@code holderOf} makes of its index, and gives
     * that holder; null when none is free (or the bank is closed).
     */
    synchronized <T> T take(IntFunction<T> holderOf) {
        reclaim();
        if (closed || free.isEmpty()) {
            refused++;
            return null;
        }
        int slot = free.pop();
        T holder;
        try {
            holder = holderOf.apply(slot);
        } catch (RuntimeException e) {
            free.push(slot);
            throw e;
        }
        if (holder == null) {
            free.push(slot);
            throw new IllegalArgumentException("a slot needs a holder");
        }
        holders[slot] = new Watch(holder, slot, collected);
        taken++;
        return holder;
    }

    /** Gives {@code slot} back if {@code holder} holds it; false (nothing changes) if not: given back already. */
    synchronized boolean give(int slot, Object holder) {
        if (!holds(slot, holder)) {
            return false;
        }
        Watch w = holders[slot];
        holders[slot] = null;
        w.clear();
        free.push(slot);
        taken--;
        return true;
    }

    /** Whether {@code holder} holds {@code slot} now. */
    synchronized boolean holds(int slot, Object holder) {
        return !closed && slot >= 0 && slot < holders.length && holders[slot] != null
                && holders[slot].refersTo(holder);
    }

    /** Slots whose holders were collected without giving them back become free. */
    private void reclaim() {
        for (Reference<?> r; (r = collected.poll()) != null; ) {
            Watch w = (Watch) r;
            if (holders[w.slot] == w) {   // not given back and taken again meanwhile
                holders[w.slot] = null;
                free.push(w.slot);
                taken--;
                reclaimed++;
            }
        }
    }

    /** Every slot free, and none taken again: the bank's memory is gone. Holders' later gives do nothing. */
    synchronized void close() {
        closed = true;
        for (int i = 0; i < holders.length; i++) {
            if (holders[i] != null) {
                holders[i].clear();
                holders[i] = null;
            }
        }
        taken = 0;
    }

    int capacity() {
        return holders.length;
    }

    /** Slots taken now (those whose holders were collected count until the next {@link #take} reclaims them). */
    synchronized int taken() {
        return taken;
    }

    /** Slots reclaimed from collected holders so far. */
    synchronized long reclaimed() {
        return reclaimed;
    }

    /** Takes refused so far (every slot taken). */
    synchronized long refused() {
        return refused;
    }
}
