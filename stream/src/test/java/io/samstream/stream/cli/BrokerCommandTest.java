package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.KafkaClients;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code samstream broker}: a broker that keeps its records in its folder across a stop and a start, and clear
 * one-line errors for a taken port, a port out of range, a folder that is a file or somebody else's, a wildcard
 * host. (Its Ctrl-C in a JVM of its own is what the cluster walk-through test does.)
 */
@Timeout(180)
class BrokerCommandTest {
    private static final Pattern BOOTSTRAP = Pattern.compile("bootstrap servers: (127\\.0\\.0\\.1:\\d+)");

    @TempDir
    Path dir;

    @Test
    void keepsItsTopicsAndRecordsAcrossAStopAndAStart() throws Exception {
        Path data = dir.resolve("broker");
        String bootstrap;
        try (CliRun.Running broker = new CliRun.Running("broker", "--dir", data.toString(), "--port", "0")) {
            broker.awaitOutput("running until Ctrl-C", Duration.ofSeconds(90));
            assertTrue(broker.out().contains("data in " + data.toAbsolutePath() + " (new)"), broker.out());
            bootstrap = address(broker.out());
            KafkaClients clients = KafkaClients.plaintext(bootstrap);
            Records.send(clients, "kept", "k", "the record of the first run", Duration.ofSeconds(30));
            broker.close();
            assertTrue(broker.out().contains("samstream broker: stopped (data kept in " + data.toAbsolutePath() + ")"),
                    broker.out());
        }
        try (CliRun.Running broker = new CliRun.Running("broker", "--dir", data.toString(), "--port", "0")) {
            broker.awaitOutput("running until Ctrl-C", Duration.ofSeconds(90));
            assertTrue(broker.out().contains("(reused: its topics and records are kept)"), broker.out());
            List<String> values = new ArrayList<>();
            assertTrue(TopicReads.readToEnd(KafkaClients.plaintext(address(broker.out())), "kept", Duration.ofSeconds(30),
                    r -> values.add(new String(r.value(), StandardCharsets.UTF_8))));
            assertEquals(List.of("the record of the first run"), values);
        }
    }

    @Test
    void aTakenPortIsAClearError() throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            CliRun.Result r = CliRun.run("broker", "--dir", dir.resolve("b").toString(), "--port",
                    Integer.toString(taken.getLocalPort()));
            assertEquals(1, r.code(), r.all());
            assertTrue(r.err().startsWith("samstream: error: cannot listen on 127.0.0.1:" + taken.getLocalPort()), r.all());
            assertTrue(r.err().contains("Give another --port"), r.all());
            assertEquals(1, r.err().lines().count(), r.all());
        }
    }

    @Test
    void badOptionsAreRefusedNamingTheOption() throws Exception {
        CliRun.Result r = CliRun.run("broker", "--dir", dir.resolve("b").toString(), "--port", "70000");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().contains("--port must be 1 to 65535 (or 0: a free one), got 70000"), r.all());

        Path file = Files.writeString(dir.resolve("a-file"), "x");
        r = CliRun.run("broker", "--dir", file.toString(), "--port", "0");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().contains("--dir " + file + " is a file, not a folder"), r.all());

        Path foreign = Files.createDirectories(dir.resolve("photos"));
        Files.writeString(foreign.resolve("holiday.jpg"), "not kafka");
        r = CliRun.run("broker", "--dir", foreign.toString(), "--port", "0");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().contains("holds files but no Kafka data (meta.properties)"), r.all());
        assertEquals(List.of("holiday.jpg"), Files.list(foreign).map(p -> p.getFileName().toString()).toList(),
                "nothing written into a folder that is not the broker's");

        r = CliRun.run("broker", "--dir", dir.resolve("c").toString(), "--port", "0", "--host", "0.0.0.0");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().contains("--host: host must be an address clients can reach (it is advertised to them),"
                + " not '0.0.0.0'"), r.all());
    }

    private static String address(String out) {
        Matcher m = BOOTSTRAP.matcher(out);
        assertTrue(m.find(), out);
        return m.group(1);
    }
}
