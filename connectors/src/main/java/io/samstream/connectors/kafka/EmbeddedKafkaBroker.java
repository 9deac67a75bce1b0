package io.samstream.connectors.kafka;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Apache Kafka broker running inside this JVM: one node in KRaft mode that is both broker and
 * controller, listening on 127.0.0.1 only (clients on another address with {@link Builder#host}). It is what
 * {@code samstream.kafka.bootstrap-servers = ""} starts, what {@code samstream broker} runs, and what the tests
 * publish to.
 *
 * <p>The storage directory is formatted on first start. Start a broker on the port and log directory
 * of a closed one and it comes back with its topics and records: that is how tests simulate an outage.
 *
 * <pre>{@code
 * try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start()) {
 *     broker.createTopic("samstream.masks", 3, false);
 *     String bootstrap = broker.bootstrapServers();   // "127.0.0.1:<port>"
 * }
 * }</pre>
 *
 * <p>Kafka treats some internal faults (a corrupt metadata log) as fatal and halts the process; that
 * is Kafka's behaviour and applies here too. Kafka logs a lot at INFO: set the {@code kafka} and
 * {@code org.apache.kafka} loggers to WARN.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EmbeddedKafkaBroker.class);

    private static final int NODE_ID = 1;
    private static final String HOST = "127.0.0.1";
    private static final String BROKER_LISTENER = "BROKER";
    private static final String CONTROLLER_LISTENER = "CONTROLLER";
    /**
     * The optional second client listener ({@link Builder#secureListener}); its settings are broker
     * properties prefixed {@code listener.name.secure.}.
     */
    public static final String SECURE_LISTENER = "SECURE";
    /** Port 0 means "pick one": another process may take a picked port before Kafka binds it. */
    private static final int BIND_ATTEMPTS = 3;
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

    private final KafkaRaftServer server;
    private final String host;
    private final int port;
    private final int securePort;
    private final Path logDir;
    private final boolean ownsLogDir;
    private boolean closed;

    private EmbeddedKafkaBroker(KafkaRaftServer server, String host, int port, int securePort, Path logDir,
            boolean ownsLogDir) {
        this.server = server;
        this.host = host;
        this.port = port;
        this.securePort = securePort;
        this.logDir = logDir;
        this.ownsLogDir = ownsLogDir;
    }

    /** A broker on a free port with its data in a temporary directory, deleted on close. */
    public static EmbeddedKafkaBroker start() {
        return builder().start();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code 127.0.0.1:<port>} (or the {@link Builder#host}'s), for the {@code bootstrap.servers} of clients. */
    public String bootstrapServers() {
        return hostPort(host, port);
    }

    /** {@code 127.0.0.1:<port>} of the secure listener; only with {@link Builder#secureListener}. */
    public String secureBootstrapServers() {
        if (securePort == 0) {
            throw new IllegalStateException("this broker has no secure listener (Builder.secureListener)");
        }
        return hostPort(host, securePort);
    }

    /** The port clients connect to (never 0, also when a free one was picked). */
    public int port() {
        return port;
    }

    /** Where the broker keeps its records and metadata. */
    public Path logDir() {
        return logDir;
    }

    /**
     * Creates a topic with replication factor 1 and returns once every partition takes records. A
     * topic that already exists is left as it is (a broker restarted on its old log directory still
     * has its topics).
     *
     * @param compacted {@code cleanup.policy=compact} (keeps the latest record per key) instead of delete
     */
    public void createTopic(String name, int partitions, boolean compacted) {
        Objects.requireNonNull(name, "name");
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be at least 1, got " + partitions);
        }
        NewTopic topic = new NewTopic(name, partitions, (short) 1);
        if (compacted) {
            topic.configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
        }
        try (Admin admin = Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) ADMIN_TIMEOUT.toMillis()))) {
            try {
                admin.createTopics(List.of(topic)).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                log.debug("Created topic {} ({} partitions{})", name, partitions, compacted ? ", compacted" : "");
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
                log.debug("Topic {} exists already", name);
            }
            awaitLeaders(admin, name);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Could not create topic " + name + ": " + e.getCause().getMessage(),
                    e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("Could not create topic " + name + " within " + ADMIN_TIMEOUT, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while creating topic " + name, e);
        }
    }

    /**
     * The controller acknowledges a new topic before the broker leads its partitions. An idempotent
     * producer whose first batch lands in that gap (NOT_LEADER) while its second is accepted gets
     * stuck on OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout. Listing the partitions'
     * offsets succeeds only once the broker leads them. Right after creation the broker may not know
     * the topic yet (UNKNOWN_TOPIC_OR_PARTITION and other retriable errors surface here on a loaded
     * machine): those are retried until {@link #ADMIN_TIMEOUT}.
     */
    private static void awaitLeaders(Admin admin, String topic)
            throws ExecutionException, InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
        while (true) {
            try {
                listAllOffsets(admin, topic);
                return;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof RetriableException) || System.nanoTime() > deadline) {
                    throw e;
                }
                log.debug("Topic {} not ready yet ({}), retrying", topic, e.getCause().getMessage());
                Thread.sleep(50);
            }
        }
    }

    /**
     * The records a topic holds (end minus start offset over its partitions): after a restart on a kept
     * log directory, those of earlier runs. 0 for a topic that does not exist.
     */
    public long recordCount(String topic) {
        try (Admin admin = Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) ADMIN_TIMEOUT.toMillis()))) {
            if (!admin.listTopics().names().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).contains(topic)) {
                return 0;
            }
            TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(topic);
            Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (TopicPartitionInfo p : description.partitions()) {
                earliest.put(new TopicPartition(topic, p.partition()), OffsetSpec.earliest());
                latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
            }
            long count = 0;
            for (var e : admin.listOffsets(latest).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .entrySet()) {
                count += e.getValue().offset();
            }
            for (var e : admin.listOffsets(earliest).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .entrySet()) {
                count -= e.getValue().offset();
            }
            return count;
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Could not count the records of topic " + topic + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while counting the records of topic " + topic, e);
        }
    }

    private static void listAllOffsets(Admin admin, String topic)
            throws ExecutionException, InterruptedException, TimeoutException {
        TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames()
                .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(topic);
        Map<TopicPartition, OffsetSpec> partitions = new HashMap<>();
        for (TopicPartitionInfo p : description.partitions()) {
            partitions.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
        }
        admin.listOffsets(partitions).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Shuts the broker down (clients see it go away) and deletes its log directory when it was a
     * temporary one. Closing twice does nothing.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        server.shutdown();
        server.awaitShutdown();
        if (ownsLogDir) {
            deleteRecursively(logDir);
        }
        log.info("Embedded Kafka broker at {} stopped", bootstrapServers());
    }

    /** How to start a broker: the defaults give a free port and a temporary directory. */
    public static final class Builder {
        private String host = HOST;
        private int port;
        private String secureProtocol;
        private Path logDir;
        private final Map<String, String> overrides = new HashMap<>();

        private Builder() {}

        /** The client port; 0 (the default) picks a free one. */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be 0 (pick a free one) or 1-65535, got " + port);
            }
            this.port = port;
            return this;
        }

        /**
         * The address the client listeners bind and advertise (default 127.0.0.1): one that every client can
         * reach, so not a wildcard such as 0.0.0.0. The controller stays on 127.0.0.1.
         */
        public Builder host(String host) {
            Objects.requireNonNull(host, "host");
            String h = host.trim();
            if (h.isEmpty() || h.equals("0.0.0.0") || h.equals("::") || h.equals("[::]")) {
                throw new IllegalArgumentException("host must be an address clients can reach (it is advertised to"
                        + " them), not '" + host + "'");
            }
            this.host = h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
            return this;
        }

        /**
         * Keep the data here (created when missing, formatted when empty) and leave it on close. By
         * default a temporary directory is used and deleted on close.
         */
        public Builder logDir(Path logDir) {
            this.logDir = Objects.requireNonNull(logDir, "logDir");
            return this;
        }

        /**
         * A second client listener, {@value #SECURE_LISTENER}, on a free port with {@code protocol}
         * (SSL, SASL_SSL, SASL_PLAINTEXT); the broker talks to itself on the plain one. Its key
         * stores and SASL users are broker properties prefixed {@code listener.name.secure.}, e.g.
         * {@code listener.name.secure.ssl.keystore.location} and
         * {@code listener.name.secure.plain.sasl.jaas.config}.
         */
        public Builder secureListener(String protocol) {
            this.secureProtocol = Objects.requireNonNull(protocol, "protocol");
            return this;
        }

        /** A broker setting of Kafka's own ({@code server.properties} style); it wins over ours. */
        public Builder brokerProperty(String key, String value) {
            overrides.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** Formats the storage when needed and starts the broker; returns once it takes requests. */
        public EmbeddedKafkaBroker start() {
            boolean ownsLogDir = logDir == null;
            Path dir;
            try {
                dir = ownsLogDir ? Files.createTempDirectory("samstream-kafka-") : Files.createDirectories(logDir);
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot create the Kafka log directory " + logDir, e);
            }
            try {
                formatIfNeeded(dir);
                for (int attempt = 1; ; attempt++) {
                    int clientPort = port != 0 ? port : freePort(host);
                    int controllerPort = freePort(HOST);
                    int securePort = secureProtocol == null ? 0 : freePort(host);
                    try {
                        KafkaRaftServer server = new KafkaRaftServer(new KafkaConfig(
                                brokerConfig(dir, clientPort, controllerPort, securePort), false), Time.SYSTEM);
                        startOrShutdown(server);
                        EmbeddedKafkaBroker broker = new EmbeddedKafkaBroker(server, host, clientPort, securePort,
                                dir, ownsLogDir);
                        log.info("Embedded Kafka broker (KRaft, single node) running at {}, data in {}",
                                broker.bootstrapServers(), dir);
                        return broker;
                    } catch (RuntimeException e) {
                        boolean portTaken = hasCause(e, BindException.class);
                        if (!portTaken || attempt == BIND_ATTEMPTS || port != 0) {
                            throw e;
                        }
                        log.debug("A picked port was taken before the broker bound it; trying others", e);
                    }
                }
            } catch (RuntimeException e) {
                if (ownsLogDir) {
                    deleteRecursively(dir);
                }
                throw new IllegalStateException("The embedded Kafka broker did not start: " + e.getMessage(), e);
            }
        }

        private Map<String, String> brokerConfig(Path dir, int clientPort, int controllerPort, int securePort) {
            Map<String, String> config = new HashMap<>();
            config.put("process.roles", "broker,controller");
            config.put("node.id", Integer.toString(NODE_ID));
            config.put("controller.quorum.voters", NODE_ID + "@" + HOST + ":" + controllerPort);
            config.put("listeners", BROKER_LISTENER + "://" + hostPort(host, clientPort) + ","
                    + CONTROLLER_LISTENER + "://" + HOST + ":" + controllerPort);
            config.put("advertised.listeners", BROKER_LISTENER + "://" + hostPort(host, clientPort));
            config.put("listener.security.protocol.map", BROKER_LISTENER + ":PLAINTEXT," + CONTROLLER_LISTENER + ":PLAINTEXT");
            if (secureProtocol != null) {
                String secure = SECURE_LISTENER + "://" + hostPort(host, securePort);
                config.put("listeners", config.get("listeners") + "," + secure);
                config.put("advertised.listeners", config.get("advertised.listeners") + "," + secure);
                config.put("listener.security.protocol.map", config.get("listener.security.protocol.map") + ","
                        + SECURE_LISTENER + ":" + secureProtocol);
            }
            config.put("inter.broker.listener.name", BROKER_LISTENER);
            config.put("controller.listener.names", CONTROLLER_LISTENER);
            config.put("log.dirs", dir.toString());
            config.put("metadata.log.dir", dir.toString());
            // One node: internal topics cannot have more replicas, and need few partitions.
            config.put("offsets.topic.replication.factor", "1");
            config.put("offsets.topic.num.partitions", "1");
            config.put("transaction.state.log.replication.factor", "1");
            config.put("transaction.state.log.min.isr", "1");
            config.put("transaction.state.log.num.partitions", "1");
            config.put("share.coordinator.state.topic.replication.factor", "1");
            config.put("share.coordinator.state.topic.min.isr", "1");
            // Consumers of a fresh group start at once instead of waiting for more members.
            config.put("group.initial.rebalance.delay.ms", "0");
            // The cleaner's offset map is 128 MiB of heap by default; compacted topics here are small.
            config.put("log.cleaner.dedupe.buffer.size", Integer.toString(8 << 20));
            config.put("num.network.threads", "2");
            config.put("num.io.threads", "4");
            config.putAll(overrides);
            return config;
        }

        /** Kafka refuses to start on an unformatted directory; format it once, keep it afterwards. */
        private static void formatIfNeeded(Path dir) {
            if (Files.exists(dir.resolve("meta.properties"))) {
                return;
            }
            ByteArrayOutputStream output = new ByteArrayOutputStream();
            try (PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8)) {
                new Formatter()
                        .setPrintStream(out)
                        .setNodeId(NODE_ID)
                        .setClusterId(Uuid.randomUuid().toString())
                        .addDirectory(dir.toString())
                        .setMetadataLogDirectory(dir.toString())
                        .setControllerListenerName(CONTROLLER_LISTENER)
                        .setReleaseVersion(MetadataVersion.latestProduction())
                        .run();
            } catch (Exception e) {
                throw new IllegalStateException("Cannot format Kafka storage in " + dir + ": " + e.getMessage(), e);
            }
            log.debug("Formatted Kafka storage: {}", output.toString(StandardCharsets.UTF_8).strip());
        }

        private static void startOrShutdown(KafkaRaftServer server) {
            try {
                server.startup();
            } catch (RuntimeException e) {
                try {
                    server.shutdown();
                    server.awaitShutdown();
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        }
    }

    private static int freePort(String host) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName(host), 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("No free port on " + host, e);
        }
    }

    /** {@code host:port}, an IPv6 address in brackets. */
    private static String hostPort(String host, int port) {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    private static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            log.warn("Could not delete the embedded broker's directory {}: {}", dir, e.getMessage());
        }
    }
}
