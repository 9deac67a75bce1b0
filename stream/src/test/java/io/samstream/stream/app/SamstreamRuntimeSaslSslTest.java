package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.connectors.kafka.KafkaReachability;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.stream.engine.PromptsTopicWatcher;
import io.samstream.testkit.connectors.MaskTopics;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine against a broker that takes only SASL_SSL (PLAIN users, a certificate made here): with the
 * {@code samstream.kafka.client} block every client of the engine gets through (streams topic, prompts
 * topic, dead letters, masks, topic creation); without credentials, or with wrong ones, it is refused.
 */
@Timeout(240)
class SamstreamRuntimeSaslSslTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule required";

    @TempDir
    static Path dir;
    static TestTls tls;
    static EmbeddedKafkaBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        tls = TestTls.create(dir);
        String l = "listener.name." + EmbeddedKafkaBroker.SECURE_LISTENER.toLowerCase() + ".";
        broker = EmbeddedKafkaBroker.builder()
                .secureListener("SASL_SSL")
                .brokerProperty(l + "sasl.enabled.mechanisms", "PLAIN")
                .brokerProperty(l + "plain.sasl.jaas.config",
                        PLAIN + " user_engine=\"engine-secret\" user_reader=\"reader-secret\";")
                .brokerProperty(l + "ssl.keystore.location", tls.keyStore().toString())
                .brokerProperty(l + "ssl.keystore.password", tls.password())
                .brokerProperty(l + "ssl.key.password", tls.password())
                .brokerProperty(l + "ssl.keystore.type", "PKCS12")
                .start();
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    /** A client of user {@code user}: SASL_SSL, PLAIN, trusting the test certificate. */
    private static Map<String, String> security(String user, String password) {
        return Map.of("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN",
                "sasl.jaas.config", PLAIN + " username=\"" + user + "\" password=\"" + password + "\";",
                "ssl.truststore.location", tls.trustStore().toString(),
                "ssl.truststore.password", tls.password(), "ssl.truststore.type", "PKCS12");
    }

    private SamstreamConfig config(String password, String suffix) throws Exception {
        Path conf = Files.writeString(dir.resolve("sasl-" + suffix + ".conf"), """
                samstream {
                  model.checkpoint = "%s"
                  device = cpu
                  streams-topic = "secure-streams"
                  kafka {
                    bootstrap-servers = "%s"
                    masks-topic = "secure-masks"
                    prompts-topic = "secure-prompts"
                    prompts-dead-letter-topic = "secure-prompts-dlt"
                    client {
                      security.protocol = SASL_SSL
                      sasl.mechanism = PLAIN
                      sasl.jaas.config = "%s username=\\"engine\\" password=\\"%s\\";"
                      ssl.truststore.location = "%s"
                      ssl.truststore.password = "%s"
                      ssl.truststore.type = PKCS12
                    }
                  }
                  http.enabled = off
                }
                """.formatted(SamstreamRuntimePromptsTest.TINY, broker.secureBootstrapServers(), PLAIN, password,
                tls.trustStore(), tls.password()));
        return ConfigLoader.load(conf);
    }

    @Test
    void everyClientOfTheEngineGetsThroughWithTheClientBlock() throws Exception {
        Map<String, Object> reader = Map.copyOf(security("reader", "reader-secret"));
        KafkaClients readerClients = new KafkaClients(broker.secureBootstrapServers(), security("reader", "reader-secret"));
        try (SamstreamRuntime rt = SamstreamRuntime.start(config("engine-secret", "ok"), VideoConnectors.sources(),
                c -> Optional.empty());
             KafkaProducer<String, byte[]> producer = readerClients.producer("test-writer", Map.of(),
                     new StringSerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>("secure-streams", "clip",
                    "{\"location\":\"testpattern:64x48@25?frames=5\",\"prompts\":{\"grid\":1}}"
                            .getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            producer.send(new ProducerRecord<>("secure-prompts", "nope",
                    "{\"stream\":\"nope\",\"op\":\"add\",\"object\":1,\"points\":[[1,1,1]]}"
                            .getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            List<MaskRecord> masks = MaskTopics.readAll(broker.secureBootstrapServers(), reader, "secure-masks", 5, WAIT);
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L), masks.stream().map(MaskRecord::frame).toList());
            try (KafkaConsumer<String, byte[]> c = readerClients.consumer("test-dlt", Map.of(
                    ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(),
                    new ByteArrayDeserializer())) {
                TopicPartition p = new TopicPartition("secure-prompts-dlt", 0);
                c.assign(List.of(p));
                ConsumerRecord<String, byte[]> dead = null;
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (dead == null && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                        dead = r;
                    }
                }
                assertTrue(dead != null, "the dead-letter producer got through");
                assertEquals("unknown_stream", new String(dead.headers().lastHeader(PromptsTopicWatcher.REASON_HEADER)
                        .value(), StandardCharsets.UTF_8));
            }
        }
    }

    @Test
    void wrongCredentialsAreRefusedAtStartNamingTheClientBlock() throws Exception {
        SamstreamConfig config = config("not-the-secret", "bad");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> SamstreamRuntime.start(config, VideoConnectors.sources(), c -> Optional.empty()).close());
        assertTrue(e.getMessage().contains("refused the engine (samstream.kafka.client"), e.getMessage());
        assertTrue(e.getMessage().contains("SaslAuthenticationException"), e.getMessage());
    }

    @Test
    void aClientWithoutCredentialsIsRefused() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> KafkaReachability.check(
                KafkaClients.plaintext(broker.secureBootstrapServers()), Duration.ofSeconds(5)));
        assertTrue(e.getMessage().contains(broker.secureBootstrapServers()), e.getMessage());
    }
}
