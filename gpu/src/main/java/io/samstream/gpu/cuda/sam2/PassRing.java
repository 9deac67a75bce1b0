package io.samstream.gpu.cuda.sam2;

import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.PinnedBuffer;

/**
 * The passes of {@link CudaSam2Tracker} in flight: a ring of slots in one pinned buffer, each holding one pass's
 * staged inputs and, once its downloads land, its results. The host stages and queues the next passes while the GPU
 * runs the earlier ones and reads a pass's results only when its slot comes round again or the step ends, so the GPU
 * does not wait for the host between passes (a pass's inputs never depend on an earlier pass's results: the banks are
 * written on the device). Slots are handed out in order; not thread-safe.
 */
final class PassRing implements AutoCloseable {
    /** Reads a finished pass's results from the pinned buffer ({@code resultsAt}: its slot's result region). */
    interface Reader {
        void read(PinnedBuffer pinned, long resultsAt);
    }

    private final PinnedBuffer pinned;
    private final long inputBytes, slotBytes;
    private final CudaEvent[] done;
    private final Reader[] pending;
    private int next;

    /** How many slots fit in {@code budget} pinned bytes: at least 2, at most 8 (enough to keep the GPU fed). */
    static int slots(long inputBytes, long resultBytes, long budget) {
        long slot = align(inputBytes) + align(resultBytes);
        return (int) Math.max(2, Math.min(8, budget / slot));
    }

    /** Bytes a ring of {@code slots} slots takes. */
    static long bytes(int slots, long inputBytes, long resultBytes) {
        return slots * (align(inputBytes) + align(resultBytes));
    }

    /** A ring over {@code pinned} (at least {@link #bytes} long) with {@code slots} slots. */
    PassRing(CudaContext context, PinnedBuffer pinned, int slots, long inputBytes, long resultBytes) {
        if (pinned.bytes() < bytes(slots, inputBytes, resultBytes)) {
            throw new IllegalArgumentException("a ring of " + slots + " passes needs "
                    + bytes(slots, inputBytes, resultBytes) + " pinned bytes, " + pinned.bytes() + " given");
        }
        this.pinned = pinned;
        this.inputBytes = align(inputBytes);
        this.slotBytes = this.inputBytes + align(resultBytes);
        this.done = new CudaEvent[slots];
        this.pending = new Reader[slots];
        for (int i = 0; i < slots; i++) {
            done[i] = new CudaEvent(context, false);
        }
    }

    int size() {
        return done.length;
    }

    /**
     * The next slot, free to stage into: when a pass still holds it (the ring has come round), waits for that pass
     * and reads its results first.
     */
    int acquire() {
        int slot = next;
        next = (next + 1) % done.length;
        finish(slot);
        return slot;
    }

    /** Where slot {@code slot}'s inputs start in the pinned buffer. */
    long inputsAt(int slot) {
        return slot * slotBytes;
    }

    /** Where slot {@code slot}'s results start in the pinned buffer. */
    long resultsAt(int slot) {
        return slot * slotBytes + inputBytes;
    }

    /** The pass staged in {@code slot} is queued on {@code stream}, its downloads last; {@code reader} reads it. */
    void queued(int slot, CudaStream stream, Reader reader) {
        stream.record(done[slot]);
        pending[slot] = reader;
    }

    /** Waits for every pass in flight and reads its results, oldest first. */
    void drain() {
        for (int i = 0; i < done.length; i++) {
            finish((next + i) % done.length);
        }
    }

    /** Forgets the passes in flight without reading them (after a failure; the caller waits for its streams). */
    void abandon() {
        java.util.Arrays.fill(pending, null);
    }

    private void finish(int slot) {
        Reader r = pending[slot];
        if (r != null) {
            pending[slot] = null;
            done[slot].synchronize();
            r.read(pinned, resultsAt(slot));
        }
    }

    private static long align(long bytes) {
        return (bytes + 255) & ~255L;
    }

    @Override
    public void close() {
        for (CudaEvent e : done) {
            e.close();
        }
    }
}
