package io.samstream.stream.cli;

import com.typesafe.config.ConfigFactory;
import io.samstream.config.ConfigException;
import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.connectors.kafka.KafkaReachability;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The options every command that talks to Kafka shares (a picocli mixin): {@code -c app.conf} as {@code run}
 * takes it (the brokers, the {@code samstream.kafka.client} block with SASL/TLS, the topic names, the cluster's
 * partitions), {@code --bootstrap} as a shortcut for the brokers, and how long to wait for them.
 */
final class KafkaOptions {
    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
            description = "Configuration file (HOCON) as `run` takes it: samstream.kafka (bootstrap-servers, the"
                    + " kafka.client block with SASL/TLS settings, topic names), samstream.streams-topic,"
                    + " samstream.cluster.")
    Path configFile;

    @Option(names = "--bootstrap", paramLabel = "HOST:PORT[,...]",
            description = "Kafka brokers; wins over samstream.kafka.bootstrap-servers.")
    String bootstrap;

    @Option(names = "--kafka-timeout", paramLabel = "SECONDS", defaultValue = "${env:SAMSTREAM_KAFKA_TIMEOUT:-15}",
            description = "How long to wait for the brokers to answer (default: ${DEFAULT-VALUE}; the environment"
                    + " variable SAMSTREAM_KAFKA_TIMEOUT sets another default).")
    int timeoutSeconds;

    private SamstreamConfig config;

    /** The configuration: the file's (checked like `run` checks it), else the defaults. */
    SamstreamConfig config() {
        if (config == null) {
            config = configFile == null ? ConfigLoader.load() : ConfigLoader.load(configFile);
        }
        return config;
    }

    Duration timeout() {
        if (timeoutSeconds < 1 || timeoutSeconds > 600) {
            throw new ParameterException(spec.commandLine(), "--kafka-timeout must be 1 to 600 seconds, got "
                    + timeoutSeconds);
        }
        return Duration.ofSeconds(timeoutSeconds);
    }

    /**
     * The brokers: {@code --bootstrap} (checked as {@code samstream.kafka.bootstrap-servers} is), else the
     * configuration's. None is an error: the embedded broker of an engine lives in that engine.
     */
    String bootstrapServers() {
        if (bootstrap != null) {
            if (bootstrap.isBlank()) {
                throw new ParameterException(spec.commandLine(), "--bootstrap must name a broker (HOST:PORT)");
            }
            try {
                return ConfigLoader.validate(ConfigFactory.parseMap(Map.of("samstream.kafka.bootstrap-servers",
                        bootstrap)).withFallback(ConfigFactory.defaultReference()).resolve(), "--bootstrap").kafka()
                        .bootstrapServers().orElseThrow();
            } catch (ConfigException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
        }
        Optional<String> configured = config().kafka().bootstrapServers();
        return configured.orElseThrow(() -> new ParameterException(spec.commandLine(), "no Kafka brokers: give"
                + " --bootstrap HOST:PORT or set samstream.kafka.bootstrap-servers"
                + (configFile == null ? " in a file given with -c" : " in " + configFile)
                + " (an engine's embedded broker logs its address; `samstream broker` runs one of its own)"));
    }

    /** Clients of the brokers with the configuration's {@code kafka.client} settings, once they answered. */
    KafkaClients connect() {
        Duration timeout = timeout();
        KafkaClients clients = KafkaClients.of(bootstrapServers(), config().kafka());
        KafkaReachability.check(clients, timeout);
        return clients;
    }
}
