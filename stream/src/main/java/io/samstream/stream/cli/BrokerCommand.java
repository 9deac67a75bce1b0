package io.samstream.stream.cli;

import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code samstream broker}: a standalone single-node Kafka broker (KRaft, {@link EmbeddedKafkaBroker}) for
 * development and small clusters on one host: its topics and records stay in {@code --dir} across restarts.
 * Runs until Ctrl-C (or until its thread is interrupted, in-process), then shuts down cleanly. No authentication
 * and one replica: production wants a real Kafka cluster.
 */
@Command(
        name = "broker",
        mixinStandardHelpOptions = true,
        description = {
            "Run a single-node Kafka broker (KRaft) for development and small clusters, until Ctrl-C.",
            "Its topics and records stay in --dir: a later start on the same folder has them all. No"
                    + " authentication, one replica: for production use a Kafka cluster."
        })
final class BrokerCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--dir", paramLabel = "D", defaultValue = "kafka-data",
            description = "Where the broker keeps its data (made when missing; default: ${DEFAULT-VALUE}).")
    Path dir;

    @Option(names = "--port", paramLabel = "P", defaultValue = "9092",
            description = "The port clients connect to (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    int port;

    @Option(names = "--host", paramLabel = "H", defaultValue = "127.0.0.1",
            description = "The address it listens on and gives clients (default: ${DEFAULT-VALUE}, this host only);"
                    + " another one opens the broker, unauthenticated, to whoever reaches it.")
    String host;

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535) {
            throw new ParameterException(spec.commandLine(), "--port must be 1 to 65535 (or 0: a free one), got " + port);
        }
        checkDir();
        checkPortFree();
        PrintWriter out = spec.commandLine().getOut();
        boolean reused = Files.exists(dir.resolve("meta.properties"));
        EmbeddedKafkaBroker broker;
        try {
            broker = EmbeddedKafkaBroker.builder().host(host).port(port).logDir(dir).start();
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--host: " + e.getMessage());
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            broker.close();
            out.println("samstream broker: stopped (data kept in " + dir.toAbsolutePath().normalize() + ")");
            out.flush();
            stopped.countDown();
        }, "samstream-broker-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        out.println("samstream broker: Kafka (KRaft, single node), data in " + dir.toAbsolutePath().normalize()
                + (reused ? " (reused: its topics and records are kept)" : " (new)"));
        if (!InetAddress.getByName(host).isLoopbackAddress()) {
            spec.commandLine().getErr().println("samstream broker: warning: listening on " + host
                    + " without authentication: whoever reaches it can read and write every topic");
        }
        out.println("bootstrap servers: " + broker.bootstrapServers());
        out.println("running until Ctrl-C");
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            // Stopped by whoever runs this in-process: shut down as Ctrl-C would.
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
                hook.run();
            } catch (IllegalStateException shuttingDown) {
                // The hook runs already.
            }
        }
        return 0;
    }

    /** A folder of its own: new, empty, or a broker's data; never a file or somebody else's files. */
    private void checkDir() throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        if (!Files.isDirectory(dir)) {
            throw new ParameterException(spec.commandLine(), "--dir " + dir + " is a file, not a folder");
        }
        boolean empty;
        try (Stream<Path> entries = Files.list(dir)) {
            empty = entries.findAny().isEmpty();
        }
        if (!empty && !Files.exists(dir.resolve("meta.properties"))) {
            throw new ParameterException(spec.commandLine(), "--dir " + dir + " holds files but no Kafka data"
                    + " (meta.properties): give a new or empty folder, or one a broker used before");
        }
    }

    /** A port in use is a clear error now, not a bind failure deep in Kafka's start. */
    private void checkPortFree() {
        if (port == 0) {
            return;
        }
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName(host), port));
        } catch (IOException e) {
            throw new IllegalStateException("cannot listen on " + host + ":" + port + " (" + e.getMessage()
                    + "): another broker or program has it? Give another --port");
        }
    }
}
