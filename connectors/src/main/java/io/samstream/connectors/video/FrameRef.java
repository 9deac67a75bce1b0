package io.samstream.connectors.video;

import static org.bytedeco.ffmpeg.global.avutil.av_frame_clone;
import static org.bytedeco.ffmpeg.global.avutil.av_frame_free;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.util.function.Function;
import org.bytedeco.ffmpeg.avutil.AVFrame;

/**
 * A reference on a decoded FFmpeg frame, kept until {@link #release} (idempotent) or until its owner is
 * collected: the planes stay valid (and out of the decoder's pool) while a picture holds them.
 */
final class FrameRef {
    private static final Cleaner CLEANER = Cleaner.create();

    private final Held held;
    private final Cleaner.Cleanable cleanable;

    /** FFmpeg's frame, freed once. */
    private static final class Held implements Runnable {
        AVFrame frame;

        @Override
        public synchronized void run() {
            if (frame != null) {
                av_frame_free(frame);
                frame = null;
            }
        }
    }

    /** A new reference on {@code frame} (the caller keeps and unrefs its own), released when {@code owner} is collected. */
    FrameRef(String streamId, AVFrame frame, Object owner) throws IOException {
        AVFrame ref = av_frame_clone(frame);
        if (ref == null) {
            throw new IOException(streamId + ": out of memory referencing a decoded frame");
        }
        this.held = new Held();
        held.frame = ref;
        this.cleanable = CLEANER.register(owner, held);
    }

    /** Runs {@code use} on the frame while it is held; {@code whenReleased} when it was released first. */
    <T> T with(Function<AVFrame, T> use, String whenReleased) {
        synchronized (held) {
            if (held.frame == null) {
                throw new IllegalStateException(whenReleased);
            }
            return use.apply(held.frame);
        }
    }

    boolean released() {
        synchronized (held) {
            return held.frame == null;
        }
    }

    void release() {
        cleanable.clean();
    }
}
