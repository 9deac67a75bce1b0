package io.samstream.bench;

import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The Kafka broker a benchmark publishes to: the embedded one in the benchmark's own JVM, or the same broker in
 * a JVM of its own ({@link #inProcess}), as a deployment runs Kafka apart from the engine, so that the broker's
 * buffers and collections are not the engine's.
 *
 * <p>The child JVM is this class's {@link #main}: it starts an {@link EmbeddedKafkaBroker}, prints
 * {@code bootstrap=HOST:PORT}, then reads commands from its standard input, one per line: {@code create TOPIC
 * PARTITIONS} (answered {@code ok} once the topic takes records, or {@code error: ...}); end of input closes the
 * broker and ends the process.
 */
interface BenchBroker extends AutoCloseable {
    String bootstrapServers();

    void createTopic(String name, int partitions);

    String describe();

    @Override
    void close();

    static BenchBroker start(boolean ownProcess) throws IOException {
        return ownProcess ? ChildBroker.start() : inProcess(EmbeddedKafkaBroker.start());
    }

    static BenchBroker inProcess(EmbeddedKafkaBroker broker) {
        return new BenchBroker() {
            @Override
            public String bootstrapServers() {
                return broker.bootstrapServers();
            }

            @Override
            public void createTopic(String name, int partitions) {
                broker.createTopic(name, partitions, false);
            }

            @Override
            public String describe() {
                return "embedded Kafka in the engine's JVM";
            }

            @Override
            public void close() {
                broker.close();
            }
        };
    }

    /** The broker process: see the class doc. */
    static void main(String[] args) throws IOException {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start();
             BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            System.out.println("bootstrap=" + broker.bootstrapServers());
            System.out.flush();
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] w = line.trim().split("\\s+");
                try {
                    if (w.length != 3 || !w[0].equals("create")) {
                        throw new IllegalArgumentException("expected 'create TOPIC PARTITIONS', got '" + line + "'");
                    }
                    broker.createTopic(w[1], Integer.parseInt(w[2]), false);
                    System.out.println("ok");
                } catch (RuntimeException e) {
                    System.out.println("error: " + e.getMessage());
                }
                System.out.flush();
            }
        }
    }

    /** A broker in a child JVM started from this one's runtime and class path. */
    final class ChildBroker implements BenchBroker {
        private final Process process;
        private final PrintWriter in;
        /** The child's answers; a thread drains its stdout all along, so its logging never blocks it. */
        private final java.util.concurrent.BlockingQueue<String> answers = new java.util.concurrent.LinkedBlockingQueue<>();
        private final String bootstrap;

        private ChildBroker(Process process) throws IOException {
            this.process = process;
            this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
            Thread drain = new Thread(() -> {
                try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line = out.readLine(); line != null; line = out.readLine()) {
                        if (line.startsWith("bootstrap=") || line.equals("ok") || line.startsWith("error: ")) {
                            answers.add(line);
                        } else if (line.contains("ERROR") || line.contains("WARN")) {
                            System.err.println("[broker process] " + line);
                        }
                    }
                } catch (IOException e) {
                    System.err.println("[broker process] stdout: " + e);
                }
                answers.add("error: the broker process ended (exit " + exitCode() + ")");
            }, "broker-process-stdout");
            drain.setDaemon(true);
            drain.start();
            String line = readAnswer(Duration.ofMinutes(2));
            if (!line.startsWith("bootstrap=")) {
                process.destroyForcibly();
                throw new IOException("the broker process said '" + line + "' instead of its address");
            }
            this.bootstrap = line.substring("bootstrap=".length());
        }

        static ChildBroker start() throws IOException {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(List.of(java, "-Xmx8g", "-cp", System.getProperty("java.class.path"),
                    BenchBroker.class.getName()))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            return new ChildBroker(p);
        }

        private String readAnswer(Duration timeout) throws IOException {
            try {
                String line = answers.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
                if (line == null) {
                    throw new IOException("no answer from the broker process within " + timeout);
                }
                return line;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for the broker process", e);
            }
        }

        private String exitCode() {
            try {
                return process.waitFor(5, TimeUnit.SECONDS) ? Integer.toString(process.exitValue()) : "none yet";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "unknown";
            }
        }

        @Override
        public String bootstrapServers() {
            return bootstrap;
        }

        @Override
        public synchronized void createTopic(String name, int partitions) {
            in.println(String.format(Locale.ROOT, "create %s %d", name, partitions));
            try {
                String answer = readAnswer(Duration.ofMinutes(1));
                if (!answer.equals("ok")) {
                    throw new IllegalStateException("broker process, topic " + name + ": " + answer);
                }
            } catch (IOException e) {
                throw new IllegalStateException("broker process, topic " + name + ": " + e.getMessage(), e);
            }
        }

        @Override
        public String describe() {
            return "embedded Kafka in a JVM of its own";
        }

        @Override
        public void close() {
            in.close();
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }
}
