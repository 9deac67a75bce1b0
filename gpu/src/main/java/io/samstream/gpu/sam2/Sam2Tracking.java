package io.samstream.gpu.sam2;

import java.util.List;
import java.util.Set;

/**
 * A SAM 2.1 model ready to track streams: the CPU reference ({@link Sam2Model}, each stream a {@link Sam2VideoTracker})
 * or the whole step on a GPU ({@code io.samstream.gpu.cuda.sam2.CudaSam2Tracker}). Streams are independent; each keeps
 * its objects' memory banks.
 */
public interface Sam2Tracking extends AutoCloseable {
    Sam2Config config();

    /** Where and how it runs, for logs. */
    String describe();

    /** A new stream with no objects. */
    StreamTracker openStream();

    /**
     * Whether {@link #track(List, List, List)} runs several frames together (of several streams, and several
     * consecutive frames of one: the GPU tracker), refusing a bad call before any stream moves on; if not, callers
     * step the frames one by one.
     */
    default boolean batches() {
        return false;
    }

    /**
     * The next frames of several of this model's streams with their prompts; per entry its results, as {@link
     * StreamTracker#track} gives them. A stream may appear several times: its entries are its consecutive frames in
     * list order (its second entry is the frame after its first; prompts apply on their entry's frame), and the
     * results are those of stepping the entries one after the other. Here the entries take their turn in list order
     * (a failure leaves the entries before it stepped); the GPU tracker runs them through one step (the image encoder
     * batched over all the frames, then the objects round by round, a stream's frames in order) and refuses a bad
     * call before any stream moves on.
     */
    default List<List<ObjectResult>> track(List<StreamTracker> streams, List<byte[]> frames,
                                           List<List<ObjectPrompt>> prompts) {
        List<List<ObjectResult>> out = new java.util.ArrayList<>(streams.size());
        for (int i = 0; i < streams.size(); i++) {
            out.add(streams.get(i).track(frames.get(i), prompts.get(i)));
        }
        return out;
    }

    @Override
    void close();

    /** One stream's objects, stepped frame after frame (see {@link Sam2VideoTracker} for what a step does). */
    interface StreamTracker {
        /**
         * Tracks every object on the stream's next frame (8-bit RGB at the model's input size, interleaved) and adds
         * the prompted ones (a prompt for an id already tracked starts it afresh); results in the order objects
         * were added.
         */
        List<ObjectResult> track(byte[] rgb, List<ObjectPrompt> prompts);

        /** The objects tracked now, in the order they were added. */
        Set<Integer> objects();

        /** Stops tracking an object and drops its memory. */
        void remove(int objectId);

        /** Drops every object's memory. */
        void close();
    }
}
