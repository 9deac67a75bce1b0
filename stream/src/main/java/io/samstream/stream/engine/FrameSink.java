package io.samstream.stream.engine;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.VideoFrame;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where a frame's mask record goes: Kafka, files, a test's list. A stream's records are accepted on one
 * thread, in frame order, and so is its {@link #streamEnded} (different streams' on different threads at
 * once: a sink keeps per-stream state apart); the record counts as done when the returned stage completes.
 * A sink that cannot deliver retries or fails the stage; the engine then fails the frame's stream.
 */
public interface FrameSink extends AutoCloseable {
    CompletionStage<Void> accept(MaskRecord record, VideoFrame frame);

    /** The stream ended (every one of its records was accepted): close what is open for it. */
    default void streamEnded(String streamId) {}

    @Override
    default void close() {}

    /** As {@link #close()}, within {@code timeout} where it waits for anything (Kafka's acknowledgements). */
    default void close(java.time.Duration timeout) {
        close();
    }

    /** All of {@code sinks}: done when every one is. */
    static FrameSink all(List<FrameSink> sinks) {
        List<FrameSink> copy = List.copyOf(sinks);
        if (copy.size() == 1) {
            return copy.get(0);
        }
        return new FrameSink() {
            @Override
            public CompletionStage<Void> accept(MaskRecord record, VideoFrame frame) {
                CompletableFuture<?>[] all = new CompletableFuture<?>[copy.size()];
                for (int i = 0; i < all.length; i++) {
                    all[i] = copy.get(i).accept(record, frame).toCompletableFuture();
                }
                return CompletableFuture.allOf(all);
            }

            @Override
            public void streamEnded(String streamId) {
                copy.forEach(s -> s.streamEnded(streamId));
            }

            @Override
            public void close() {
                close(java.time.Duration.ofSeconds(30));
            }

            @Override
            public void close(java.time.Duration timeout) {
                long deadline = System.nanoTime() + timeout.toNanos();
                for (FrameSink s : copy) {
                    try {
                        s.close(java.time.Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
                    } catch (Exception e) {
                        org.slf4j.LoggerFactory.getLogger(FrameSink.class).warn("closing a sink: {}", e.toString());
                    }
                }
            }
        };
    }
}
