package io.samstream.stream.app;

import io.samstream.config.SamstreamConfig;
import io.samstream.stream.engine.StreamHandle;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code samstream run}: the runtime until its streams ended or the process is stopped. */
public final class EngineRun {
    private static final Logger log = LoggerFactory.getLogger(EngineRun.class);

    private EngineRun() {}

    /** @return 0 when every configured stream ended cleanly, 1 when any failed */
    public static int run(SamstreamConfig config, PrintWriter out, boolean terminal) throws Exception {
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicBoolean stopRequested = new AtomicBoolean();
        try (SamstreamRuntime rt = SamstreamRuntime.start(config, VideoConnectors.sources(),
                VideoConnectors::fileSinks)) {
            Thread hook = new Thread(() -> {
                stopRequested.set(true);
                log.info("stopping: publishing what was decoded, then closing");
                rt.close();
                stopped.countDown();
            }, "samstream-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            List<StreamHandle> handles = rt.configuredStreams();
            boolean service = config.streamsTopic().isPresent() || config.streams().stream().anyMatch(s -> s.isLive());
            try (Progress progress = new Progress(out, terminal, rt.engine()::streams, OptionalLong.empty())) {
                if (service) {
                    log.info("running until stopped (Ctrl-C)");
                    // Ends on Ctrl-C, or when the pipeline itself stops (an engine-wide failure): then exit 1
                    // rather than run on with nothing flowing.
                    CompletableFuture<Void> stop = CompletableFuture.runAsync(() -> {
                        try {
                            stopped.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                    CompletableFuture<?> pipeline = rt.engine().pipelineDone().toCompletableFuture();
                    // In a cluster, also when this engine can no longer follow its group (Kafka failing past
                    // its timeouts): exit 1 so that its supervisor restarts it, rather than hold partitions idle.
                    CompletableFuture<?> member = rt.cluster().map(c -> c.stopped().toCompletableFuture()
                            .thenAccept(failure -> { })).orElseGet(CompletableFuture::new);
                    CompletableFuture.anyOf(stop, pipeline, member).exceptionally(e -> null).join();
                    if (!stopRequested.get() && pipeline.isDone()) {
                        log.error("the engine's pipeline stopped: exiting");
                        removeHook(hook);
                        return 1;
                    }
                    if (!stopRequested.get() && member.isDone()) {
                        log.error("this engine no longer follows its cluster's group: exiting");
                        removeHook(hook);
                        rt.close();
                        return 1;
                    }
                    return 0;
                }
                CompletableFuture.allOf(handles.stream().map(h -> h.result().toCompletableFuture())
                        .toArray(CompletableFuture[]::new)).join();
                progress.finish(handles);
            }
            removeHook(hook);
            List<StreamHandle.Result> results = new ArrayList<>();
            for (StreamHandle h : handles) {
                results.add(h.result().toCompletableFuture().join());
            }
            int failed = 0;
            for (StreamHandle.Result r : results) {
                out.printf("%s: %s, %d frames published%s%n", r.streamId(), r.state().name().toLowerCase(java.util.Locale.ROOT),
                        r.published(), r.error().map(e -> " - " + e.getMessage()).orElse(""));
                if (r.state() == StreamHandle.State.FAILED) {
                    failed++;
                }
            }
            out.flush();
            return failed == 0 ? 0 : 1;
        }
    }

    /** Removes the hook unless the JVM is already shutting down (then the hook runs anyway). */
    private static void removeHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // Shutdown in progress: the hook closes the runtime, closing twice does nothing.
        }
    }
}
