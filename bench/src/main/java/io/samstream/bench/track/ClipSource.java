package io.samstream.bench.track;

import io.samstream.connectors.video.FrameSource;
import io.samstream.connectors.video.VideoFrame;
import java.io.IOException;
import java.time.Instant;

/**
 * A clip as the engine's frame source (a file-like, finite source). Before it hands out frame {@code t}
 * it calls {@code beforeFrame} with {@code t}: the harness sends the prompts due at that frame there, so
 * they reach the engine before the frame does and apply exactly from it, whatever the pipeline's timing.
 */
final class ClipSource implements FrameSource {
    /** Called with a frame number before that frame is handed out. */
    @FunctionalInterface
    interface BeforeFrame {
        void accept(int frame) throws IOException;
    }

    private final Clip clip;
    private final String streamId;
    private final BeforeFrame beforeFrame;
    private int next;
    private boolean closed;

    ClipSource(Clip clip, String streamId, BeforeFrame beforeFrame) {
        this.clip = clip;
        this.streamId = streamId;
        this.beforeFrame = beforeFrame;
    }

    @Override
    public VideoFrame next() throws IOException {
        if (closed) {
            throw new IOException(streamId + ": source is closed");
        }
        if (next >= clip.frames()) {
            return null;
        }
        int t = next++;
        beforeFrame.accept(t);
        return new VideoFrame(streamId, t, Math.round(t * 1000.0 / clip.fps()), Instant.now(), clip.width(),
                clip.height(), clip.render(t));
    }

    @Override
    public boolean isLive() {
        return false;
    }

    @Override
    public String describe() {
        return streamId + " synthetic clip " + clip.name() + " (" + clip.width() + "x" + clip.height() + ", "
                + clip.frames() + " frames, seed " + clip.seed() + ")";
    }

    @Override
    public void close() {
        closed = true;
    }
}
