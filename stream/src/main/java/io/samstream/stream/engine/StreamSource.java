package io.samstream.stream.engine;

import akka.NotUsed;
import akka.event.Logging;
import akka.stream.Attributes;
import akka.stream.RestartSettings;
import akka.stream.javadsl.RestartSource;
import akka.stream.javadsl.Source;
import io.micrometer.core.instrument.Counter;
import io.samstream.config.EngineSettings;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.video.FrameSource;
import io.samstream.connectors.video.VideoFrame;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The source side of one stream: a {@link FrameSource} read on the blocking dispatcher, restarted with
 * backoff when live, renumbered and counted, and held to the stream's frame policy (live: keep the newest
 * frame, count what is dropped; files: backpressure to the decoder, never drop).
 */
final class StreamSource {
    private static final Logger log = LoggerFactory.getLogger(StreamSource.class);

    private StreamSource() {}

    static Source<VideoFrame, NotUsed> of(StreamSpec spec, StreamHandle handle, FrameSourceFactory factory,
            EngineSettings.Reconnect reconnect, Counter restarts, Counter decodeErrors, String blockingDispatcher) {
        Source<VideoFrame, NotUsed> decoded;
        if (spec.isLive()) {
            AtomicInteger starts = new AtomicInteger();
            RestartSettings backoff = RestartSettings.create(reconnect.minBackoff(), reconnect.maxBackoff(),
                    reconnect.randomFactor())
                    // Our own line below says what happened; Akka's would add a stack trace per attempt.
                    .withLogSettings(RestartSettings.createLogSettings(Logging.DebugLevel()));
            decoded = RestartSource.withBackoff(backoff, () -> {
                int attempt = starts.getAndIncrement();
                if (attempt > 0) {
                    restarts.increment();
                    log.info("stream {}: reconnecting (restart {})", spec.id(), attempt);
                }
                return read(spec, factory, decodeErrors, blockingDispatcher).watchTermination((mat, done) -> {
                    done.whenComplete((d, e) -> {
                        if (!handle.removing()) {
                            log.warn("stream {}: live source {}; reconnecting with backoff", spec.id(),
                                    e == null ? "ended" : "failed: " + Errors.describe(e));
                        }
                    });
                    return mat;
                });
            });
        } else {
            decoded = read(spec, factory, decodeErrors, blockingDispatcher);
            long skip = handle.started().skipFrames();
            if (skip > 0) {
                // Taken over from another engine: the frames it published are read and dropped.
                log.info("stream {}: going on from frame {} (the frames before were published elsewhere)", spec.id(),
                        skip);
                java.util.concurrent.atomic.AtomicLong seen = new java.util.concurrent.atomic.AtomicLong();
                decoded = decoded.filter(f -> {
                    if (seen.getAndIncrement() < skip) {
                        handle.skippedOne();
                        f.release(); // a GPU frame's memory back to its decoder
                        return false;
                    }
                    return true;
                });
            }
        }
        Source<VideoFrame, NotUsed> numbered = decoded.map(handle::decoded);
        if (spec.isLive()) {
            // Downstream pulls when it can take a frame; in between only the newest frame is kept.
            numbered = numbered.conflate((older, newer) -> {
                handle.droppedOne();
                older.release(); // a GPU frame's memory back to its decoder
                return newer;
            });
        }
        // Small buffers at the async boundaries: a frame waiting there only adds latency.
        return numbered.withAttributes(Attributes.inputBuffer(1, 1));
    }

    /** The frames of one opening of the source, read on the blocking dispatcher. */
    private static Source<VideoFrame, NotUsed> read(StreamSpec spec, FrameSourceFactory factory, Counter decodeErrors,
            String dispatcher) {
        return Source.<VideoFrame, Opened>unfoldResource(
                () -> Opened.open(spec, factory, decodeErrors),
                Opened::next,
                Opened::close)
                .async(dispatcher);
    }

    /**
     * A source, or why it could not be opened. The error surfaces on the first read, where it fails the
     * stream like any read error (Akka would log a failure in the open as an actor error, with a trace).
     * Its decode errors go to the stream's counter as they happen.
     */
    private static final class Opened {
        private final FrameSource source;
        private final IOException error;
        private final Counter decodeErrors;
        private int counted;

        private Opened(FrameSource source, IOException error, Counter decodeErrors) {
            this.source = source;
            this.error = error;
            this.decodeErrors = decodeErrors;
        }

        static Opened open(StreamSpec spec, FrameSourceFactory factory, Counter decodeErrors) {
            try {
                FrameSource s = factory.open(spec);
                log.info("stream {}: reading {}", spec.id(), LogSafe.of(s.describe()));
                return new Opened(s, null, decodeErrors);
            } catch (IOException e) {
                return new Opened(null, e, decodeErrors);
            } catch (RuntimeException e) {
                return new Opened(null, new IOException(spec.id() + ": " + Errors.describe(e), e), decodeErrors);
            }
        }

        Optional<VideoFrame> next() throws IOException {
            if (error != null) {
                throw error;
            }
            try {
                return Optional.ofNullable(source.next());
            } finally {
                countDecodeErrors();
            }
        }

        private void countDecodeErrors() {
            int now = source.decodeErrors();
            if (now > counted) {
                decodeErrors.increment(now - counted);
                counted = now;
            }
        }

        void close() throws IOException {
            if (source != null) {
                countDecodeErrors();
                source.close();
            }
        }
    }
}
