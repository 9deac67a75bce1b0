package io.samstream.gpu.cuda.sam;

import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.CudaContext;
import io.samstream.gpu.cuda.CudaEvent;
import io.samstream.gpu.cuda.CudaKernels;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.EncoderOpsKernels;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The device ring of image embeddings: {@code slots} bf16 {@code [E*E, C]} slots (channels-last, what the
 * encoder's neck writes) in one allocation, each with the event the encoder records once it has written it.
 * Readers (the mask decoder) make their stream wait for that event and read the slot in place; no
 * embedding crosses to the host. A slot goes back to the ring when the last reference to its
 * {@link ImageEmbedding} is closed; {@link #acquire} waits for free slots, so the ring's size is the bound
 * on frames in flight between the encoder and the decoder (backpressure, no allocation).
 *
 * <p>A reader must have finished its GPU work on a slot (synchronized its stream) before it closes it: the
 * encoder writes the next embedding into it without waiting for anyone.
 */
public final class EmbeddingRing implements AutoCloseable {
    private final CudaContext context;
    private final EncoderOpsKernels encoderOps;
    private final int channels;
    private final int side;
    private final long slotBytes;
    private final DeviceMemoryPool pool;
    private final DeviceBuffer[] slots;
    private final CudaEvent[] ready;
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    private final long acquireTimeoutMillis;
    private boolean closed;
    // toTensor's own stream and buffers, made at first use, guarded by downloadLock
    private final Object downloadLock = new Object();
    private CudaStream downloadStream;
    private DeviceMemoryPool downloadScratch;
    private PinnedBuffer downloadPinned;

    /**
     * @param slots               embeddings the ring holds
     * @param channels            C, the embedding's channels
     * @param side                E, its side
     * @param acquireTimeoutMillis how long {@link #acquire} waits for free slots before it fails (a reader that
     *                            never closes its embeddings would otherwise stop the encoder for good)
     */
    public EmbeddingRing(CudaContext context, CudaKernels kernels, int slots, int channels, int side,
                         long acquireTimeoutMillis) {
        if (slots < 1 || channels < 1 || side < 1) {
            throw new IllegalArgumentException("an embedding ring needs positive sizes, got " + slots + " slots of ["
                    + side + "x" + side + ", " + channels + "]");
        }
        this.context = context;
        this.encoderOps = EncoderOpsKernels.of(kernels);
        this.channels = channels;
        this.side = side;
        this.slotBytes = 2L * side * side * channels;
        this.acquireTimeoutMillis = acquireTimeoutMillis;
        this.pool = new DeviceMemoryPool(context, slots * BumpAllocator.alignUp(slotBytes));
        this.slots = new DeviceBuffer[slots];
        this.ready = new CudaEvent[slots];
        try {
            for (int i = 0; i < slots; i++) {
                this.slots[i] = pool.allocate(slotBytes, "embedding slot " + i);
                this.ready[i] = new CudaEvent(context, false);
                free.add(i);
            }
        } catch (RuntimeException | Error ex) {
            close();
            throw ex;
        }
    }

    public int capacity() {
        return slots.length;
    }

    /** Slots free now (for metrics and tests). */
    public synchronized int available() {
        return free.size();
    }

    /** Bytes of device memory the ring holds. */
    public long bytes() {
        return pool.capacity();
    }

    /**
     * Takes {@code n} slots at once (all or none, so that concurrent batches cannot each hold a part and wait
     * for the rest), waiting for them to be free.
     *
     * @throws IllegalArgumentException when {@code n} is more than the ring holds
     * @throws IllegalStateException    when they are not free within the timeout, or the ring is closed
     */
    public List<Slot> acquire(int n) {
        if (n < 1 || n > slots.length) {
            throw new IllegalArgumentException(n + " embeddings asked for, but the ring holds " + slots.length
                    + " (raise the embedding slots, or lower the max batch)");
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(acquireTimeoutMillis);
        List<Slot> out = new ArrayList<>(n);
        synchronized (this) {
            while (!closed && free.size() < n) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("no " + n + " free embedding slots within " + acquireTimeoutMillis
                            + " ms: all but " + free.size() + " of " + slots.length + " are held by readers that have not"
                            + " closed them");
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for embedding slots", e);
                }
            }
            if (closed) {
                throw new IllegalStateException("the embedding ring is closed");
            }
            for (int i = 0; i < n; i++) {
                out.add(new Slot(free.poll()));
            }
        }
        return out;
    }

    private synchronized void release(int index) {
        free.add(index);
        notifyAll();
    }

    /** One embedding in the ring: its slot, ready once its event has fired on the device. */
    public final class Slot implements ImageEmbedding {
        private final int index;
        private final AtomicInteger refs = new AtomicInteger(1);

        private Slot(int index) {
            this.index = index;
        }

        /** The slot: bf16 {@code [E*E, C]}, channels-last. */
        public DeviceBuffer buffer() {
            return slots[index];
        }

        /** Recorded on the encoder's stream after the slot was written. */
        public CudaEvent ready() {
            return ready[index];
        }

        /** Whether this embedding lives in {@code ring}. */
        public boolean belongsTo(EmbeddingRing ring) {
            return ring == EmbeddingRing.this;
        }

        /** Records the ready event on {@code stream}, after the work queued there that writes the slot. */
        void markWritten(CudaStream stream) {
            stream.record(ready[index]);
        }

        @Override
        public Tensor toTensor() {
            check();
            return download(this);
        }

        @Override
        public ImageEmbedding retain() {
            if (refs.getAndUpdate(r -> r > 0 ? r + 1 : r) <= 0) {
                throw new IllegalStateException("embedding slot " + index + " was already given back");
            }
            return this;
        }

        @Override
        public void close() {
            int left = refs.decrementAndGet();
            if (left == 0) {
                release(index);
            } else if (left < 0) {
                throw new IllegalStateException("embedding slot " + index + " closed more often than retained");
            }
        }

        private void check() {
            if (refs.get() <= 0) {
                throw new IllegalStateException("embedding slot " + index + " was already given back");
            }
        }

        @Override
        public String toString() {
            return "Slot[" + index + " of " + slots.length + ", refs " + refs.get() + "]";
        }
    }

    /** The slot as fp32 {@code [1, C, E, E]} on the host, on the ring's own stream. */
    private Tensor download(Slot slot) {
        long t = (long) side * side;
        long bytes = 4L * t * channels;
        synchronized (downloadLock) {
            if (downloadStream == null) {
                downloadStream = new CudaStream(context);
                downloadScratch = new DeviceMemoryPool(context, bytes);
                downloadPinned = new PinnedBuffer(context, bytes, "embedding download");
            }
            downloadScratch.release(0);
            DeviceBuffer chw = downloadScratch.allocate(bytes, "embedding (fp32, channels-first)");
            downloadStream.waitFor(slot.ready());
            encoderOps.tokensToChw(downloadStream, slot.buffer(), chw, 1, (int) t, channels);
            downloadStream.download(chw, 0, downloadPinned, 0, bytes);
            downloadStream.synchronize();
            float[] v = new float[(int) (t * channels)];
            downloadPinned.buffer().asFloatBuffer().get(v);
            return new Tensor(v, 1, channels, side, side);
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            notifyAll();
        }
        synchronized (downloadLock) {
            for (AutoCloseable r : new AutoCloseable[] {downloadPinned, downloadScratch, downloadStream}) {
                closeQuietly(r);
            }
        }
        for (CudaEvent e : ready) {
            closeQuietly(e);
        }
        closeQuietly(pool);
    }

    private static void closeQuietly(AutoCloseable r) {
        if (r != null) {
            try {
                r.close();
            } catch (Exception ignored) {
                // closing what can be closed
            }
        }
    }
}
