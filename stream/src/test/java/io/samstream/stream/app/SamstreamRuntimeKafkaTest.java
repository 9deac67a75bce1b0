package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Configured brokers that do not answer are a clear error at start, naming them, in bounded time. */
class SamstreamRuntimeKafkaTest {
    @TempDir
    Path dir;

    @Test
    void anUnreachableBrokerFailsTheStartNamingItWithinItsTimeout() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // free, and closed again: nothing listens there
        }
        String servers = "127.0.0.1:" + port;
        Path conf = Files.writeString(dir.resolve("app.conf"), """
                samstream {
                  model.checkpoint = "%s"
                  device = cpu
                  kafka.bootstrap-servers = "%s"
                  streams = [ { id = cam, location = "testpattern:64x48@25?frames=2", prompts.grid = 1 } ]
                  http.enabled = off
                }
                """.formatted(SamstreamRuntimePromptsTest.TINY, servers));
        SamstreamConfig config = ConfigLoader.load(conf);
        long t0 = System.nanoTime();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> SamstreamRuntime.start(config, VideoConnectors.sources(), c -> Optional.empty()).close());
        long s = (System.nanoTime() - t0) / 1_000_000_000L;
        assertTrue(e.getMessage().contains("not reachable at " + servers), e.getMessage());
        assertTrue(s <= SamstreamRuntime.KAFKA_REACH_TIMEOUT.toSeconds() + 10, "took " + s + " s");
    }
}
