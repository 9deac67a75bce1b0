package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every Kafka command shares ({@link KafkaOptions}): an unreachable broker is one line naming it within the
 * --kafka-timeout (plus Kafka's own close), no broker at all, a malformed --bootstrap or timeout, a missing
 * configuration file: each a one-line error and a non-zero exit.
 */
@Timeout(300)
class KafkaOptionsTest {
    /** Every Kafka command, with what it needs besides the brokers. */
    private static final List<List<String>> COMMANDS = List.of(
            List.of("streams", "list", "--streams-topic", "s"),
            List.of("streams", "put", "cam", "--streams-topic", "s", "--location", "/v.mp4"),
            List.of("streams", "delete", "cam", "--streams-topic", "s"),
            List.of("prompts", "add", "--stream", "cam", "--object", "1", "--point", "1,1"),
            List.of("prompts", "reset", "--stream", "cam"),
            List.of("masks", "tail"),
            List.of("masks", "export", "--stream", "cam", "--to", "unused"));

    @TempDir
    Path dir;

    @Test
    void anUnreachableBrokerIsOneLineWithinTheTimeout() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            closed = s.getLocalPort(); // free again once closed: nothing listens there
        }
        for (List<String> command : COMMANDS) {
            List<String> args = new ArrayList<>(command);
            args.addAll(List.of("--bootstrap", "127.0.0.1:" + closed, "--kafka-timeout", "2"));
            CliRun.Result r = CliRun.run(args.toArray(String[]::new));
            assertEquals(1, r.code(), command + ": " + r.all());
            String last = r.err().lines().reduce((a, b) -> b).orElseThrow();
            assertTrue(last.startsWith("samstream: error: Kafka is not reachable at 127.0.0.1:" + closed
                    + " (samstream.kafka.bootstrap-servers): no broker answered within 2 s"), command + ": " + r.all());
            // The timeout, and the admin client's close; far from Kafka's default minute per request.
            assertTrue(r.millis() < 30_000, command + " took " + r.millis() + " ms");
        }
    }

    @Test
    void missingOrMalformedSettingsAreNamed() {
        CliRun.Result r = CliRun.run("masks", "tail");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().startsWith("samstream: no Kafka brokers: give --bootstrap HOST:PORT or set"
                + " samstream.kafka.bootstrap-servers in a file given with -c"), r.all());
        r = CliRun.run("masks", "tail", "--bootstrap", "nonsense");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().startsWith("samstream: --bootstrap: samstream.kafka.bootstrap-servers: 'nonsense' is not"
                + " host:port"), r.all());
        r = CliRun.run("masks", "tail", "--bootstrap", "");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().startsWith("samstream: --bootstrap must name a broker (HOST:PORT)"), r.all());
        r = CliRun.run("masks", "tail", "--bootstrap", "127.0.0.1:9", "--kafka-timeout", "0");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().startsWith("samstream: --kafka-timeout must be 1 to 600 seconds, got 0"), r.all());
        Path missing = dir.resolve("nope.conf");
        r = CliRun.run("streams", "list", "-c", missing.toString());
        assertEquals(1, r.code(), r.all());
        assertEquals("samstream: error: " + missing + ": configuration file not found\n", r.err());
    }
}
