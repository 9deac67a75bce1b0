package io.samstream.gpu.cuda.sam2;

import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.sam2.Sam2Config;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The inputs a pass of {@link CudaSam2Tracker} stages in its pinned buffer before the pass's graph replays, at fixed
 * offsets for {@code maxObjects} objects: the gather table (copies into the memory attention's input), the store
 * table (the new memories and pointers back into the banks), the pointers' positional encodings and the frame of
 * each object; and their upload into the device buffers the graph reads.
 */
final class PassInputs {
    private static final int POINTERS = Sam2Config.MAX_OBJECT_POINTERS;

    private final CudaStream stream;
    private final PinnedBuffer io;
    private final DeviceBuffer gatherTable, storeTable, pointerPos, frameOfSet;
    private final int maxObjects, numMaskmem, split, memDim;

    PassInputs(CudaStream stream, PinnedBuffer io, DeviceBuffer gatherTable, DeviceBuffer storeTable,
               DeviceBuffer pointerPos, DeviceBuffer frameOfSet, int maxObjects, int numMaskmem, int split,
               int memDim) {
        this.stream = stream;
        this.io = io;
        this.gatherTable = gatherTable;
        this.storeTable = storeTable;
        this.pointerPos = pointerPos;
        this.frameOfSet = frameOfSet;
        this.maxObjects = maxObjects;
        this.numMaskmem = numMaskmem;
        this.split = split;
        this.memDim = memDim;
    }

    /** Bytes the inputs of {@code n} objects take from a pass's start in the pinned buffer (offsets below: from it). */
    static long bytes(int n, int numMaskmem, int split, int memDim) {
        int spansPerObject = 1 + 2 * numMaskmem + 2 * POINTERS;
        return align((long) n * spansPerObject * Sam2Kernels.SPAN_BYTES)
                + align((long) n * 2 * Sam2Kernels.SPAN_BYTES) + align((long) n * POINTERS * split * memDim * 2)
                + align((long) n * 4);
    }

    private static long align(long bytes) {
        return (bytes + 255) & ~255L;
    }

    /** Appends a copy-table entry; returns 1. */
    static int span(ByteBuffer table, long src, long dst, long bytes) {
        Sam2Kernels.putSpan(table, src, dst, bytes);
        return 1;
    }

    long storeOffset() {
        return align((long) maxObjects * (1 + 2 * numMaskmem + 2 * POINTERS)
                * Sam2Kernels.SPAN_BYTES);
    }

    long pointerPosOffset() {
        return storeOffset() + align((long) maxObjects * 2 * Sam2Kernels.SPAN_BYTES);
    }

    long frameOffset() {
        return pointerPosOffset() + align((long) maxObjects * POINTERS * split * memDim * 2);
    }

    static ByteBuffer slice(ByteBuffer whole, long at) {
        ByteBuffer b = whole.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        b.position(Math.toIntExact(at));
        return b.slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Uploads the filled parts of the tables and arrays staged from {@code at} in the pinned buffer (async, before
     * the pass's replay; the pinned bytes must stay until the pass is done).
     */
    void upload(long at, int gatherBytes, int storeBytes, int pointerPosBytes, int frameBytes) {
        stream.upload(io, at, gatherTable, 0, gatherBytes);
        stream.upload(io, at + storeOffset(), storeTable, 0, storeBytes);
        if (pointerPosBytes > 0) {
            stream.upload(io, at + pointerPosOffset(), pointerPos, 0, pointerPosBytes);
        }
        stream.upload(io, at + frameOffset(), frameOfSet, 0, frameBytes);
    }
}
