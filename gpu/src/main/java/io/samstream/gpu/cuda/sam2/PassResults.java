package io.samstream.gpu.cuda.sam2;

import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.PinnedBuffer;
import io.samstream.gpu.sam2.ObjectResult;
import java.nio.ByteBuffer;

/**
 * What a pass of {@link CudaSam2Tracker} brings back for its {@code n} objects, and where it lies in the pass's
 * result region of the pinned buffer: the low-resolution masks ({@code n} x lowRes² fp32), the object scores and IoUs
 * ({@code n} fp32 each), then the object pointers ({@code n} x hidden bf16).
 */
final class PassResults {
    private final CudaSam2MaskDecoder decoder;
    private final PinnedBuffer pinned;
    private final int lowRes, hidden;

    PassResults(CudaSam2MaskDecoder decoder, PinnedBuffer pinned, int lowRes, int hidden) {
        this.decoder = decoder;
        this.pinned = pinned;
        this.lowRes = lowRes;
        this.hidden = hidden;
    }

    /** Bytes the results of {@code objects} objects take. */
    static long bytes(int objects, int lowRes, int hidden) {
        return objects * ((long) lowRes * lowRes * 4 + 8 + hidden * 2L);
    }

    /** Queues on {@code stream} the downloads of the decoder's outputs for {@code n} objects to {@code at}. */
    void download(CudaStream stream, long at, int n) {
        long lowBytes = (long) n * lowRes * lowRes * 4;
        stream.download(decoder.lowRes(), 0, pinned, at, lowBytes);
        stream.download(decoder.objectScores(), 0, pinned, at + lowBytes, n * 4L);
        stream.download(decoder.ious(), 0, pinned, at + lowBytes + n * 4L, n * 4L);
        stream.download(decoder.pointers(), 0, pinned, at + lowBytes + n * 8L, n * hidden * 2L);
    }

    /** Object {@code j}'s result of a finished pass of {@code n} objects downloaded to {@code at}. */
    ObjectResult read(long at, int n, int j, int objectId, boolean conditioning) {
        long lowBytes = (long) n * lowRes * lowRes * 4;
        ByteBuffer res = pinned.buffer();
        float[] low = new float[lowRes * lowRes];
        res.position(Math.toIntExact(at + (long) j * lowRes * lowRes * 4));
        res.asFloatBuffer().get(low);
        float score = res.getFloat(Math.toIntExact(at + lowBytes + j * 4L));
        float iou = res.getFloat(Math.toIntExact(at + lowBytes + n * 4L + j * 4L));
        float[] ptr = pinned.getBf16((at + lowBytes + n * 8L) / 2 + (long) j * hidden, hidden);
        return new ObjectResult(objectId, low, lowRes, score, ptr, conditioning, iou);
    }
}
