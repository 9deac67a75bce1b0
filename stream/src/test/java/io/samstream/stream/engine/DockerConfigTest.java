package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.samstream.config.ConfigException;
import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import io.samstream.testkit.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** docker/app.conf is a valid configuration and agrees with compose.yaml and prometheus.yml. */
class DockerConfigTest {
    private static final String TOKEN = "docker-config-test-token-0123456789";

    /** A file as the container loads it, with $SAMSTREAM_HTTP_TOKEN set (or not: null). */
    private static SamstreamConfig load(Path file, String token) {
        var withToken = token == null ? ConfigFactory.empty()
                : ConfigFactory.parseString("samstream.http.token = \"" + token + "\"");
        return ConfigLoader.validate(withToken.withFallback(ConfigFactory.parseFile(file.toFile()))
                .withFallback(ConfigFactory.defaultReference()).resolve(), file.toString());
    }

    @Test
    void composeConfigurationLoads() throws Exception {
        SamstreamConfig c = load(Fixtures.file("docker/app.conf"), TOKEN);
        assertEquals("kafka:9092", c.kafka().bootstrapServers().orElseThrow());
        assertEquals("0.0.0.0", c.http().host());
        assertEquals(TOKEN, c.http().token().orElseThrow());
        assertTrue(c.metrics().enabled());
        String prometheus = Files.readString(Fixtures.file("docker/prometheus.yml"));
        assertTrue(prometheus.contains("samstream:" + c.http().port()));
        assertTrue(prometheus.contains("credentials_file: /run/secrets/samstream_http_token"),
                "Prometheus scrapes with the engines' token");
        assertTrue(Files.readString(Fixtures.file("docker/compose.yaml")).contains(c.http().port() + ":" + c.http().port()));
        // Without $SAMSTREAM_HTTP_TOKEN the engines refuse to start on 0.0.0.0.
        ConfigException e = org.junit.jupiter.api.Assertions.assertThrows(ConfigException.class,
                () -> load(Fixtures.file("docker/app.conf"), null));
        assertTrue(e.getMessage().contains("samstream.http.token"), e.getMessage());
        assertEquals("samstream.streams", c.streamsTopic().orElseThrow());
        String compose = Files.readString(Fixtures.file("docker/compose.yaml"));
        assertTrue(c.cluster().enabled(), "the compose file's engines are one cluster");
        assertTrue(compose.contains("samstream-2:") && compose.contains("--partitions " + c.cluster().partitions()),
                "two engines; the seeded streams topic has cluster.partitions partitions");
        assertTrue(prometheus.contains("samstream-2:" + c.http().port()));
        // SASL (docs/security-acls.md): the engines authenticate as samstream-engine, the broker authorizes.
        assertEquals("SASL_PLAINTEXT", c.kafka().client().get("security.protocol"));
        assertTrue(c.kafka().client().get("sasl.jaas.config").contains("username=\"samstream-engine\""));
        assertTrue(compose.contains("KAFKA_AUTHORIZER_CLASS_NAME: org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                && compose.contains("--allow-principal $$E --operation Read --operation Write --operation Describe"
                        + " --topic samstream.state"), "ACLs in compose.yaml");
        // docker stop's SIGKILL comes after stop_grace_period: each engine's must outlast its shutdown-timeout.
        java.util.regex.Matcher grace = java.util.regex.Pattern.compile("stop_grace_period: (\\d+)s").matcher(compose);
        int engines = 0;
        while (grace.find()) {
            engines++;
            assertTrue(Integer.parseInt(grace.group(1)) > c.shutdownTimeout().toSeconds(), grace.group());
        }
        assertEquals(2, engines, "a stop_grace_period for each engine");
    }

    @Test
    void kubernetesConfigurationLoads() throws Exception {
        String manifest = Files.readString(Fixtures.file("docker/k8s/samstream.yaml"));
        String conf = manifest.substring(manifest.indexOf("app.conf: |") + "app.conf: |".length(), manifest.indexOf("---"));
        Path f = Files.createTempFile("k8s-app", ".conf");
        try {
            Files.writeString(f, conf);
            SamstreamConfig c = load(f, TOKEN);
            assertTrue(c.cluster().enabled());
            assertTrue(c.cluster().instanceId().isEmpty(), "the pod name is the instance id");
            assertTrue(manifest.contains("containerPort: " + c.http().port()));
            assertTrue(manifest.contains("readinessProbe:\n            httpGet: { path: /health/ready, port: http }")
                    && manifest.contains("livenessProbe:\n            httpGet: { path: /health/live, port: http }"),
                    "the probes are the health endpoints");
            assertTrue(manifest.contains("secretKeyRef: { name: samstream-http, key: token }"));
            assertTrue(manifest.contains("kind: StatefulSet") && manifest.contains("nvidia.com/gpu: 1"));
            java.util.regex.Matcher grace = java.util.regex.Pattern.compile("terminationGracePeriodSeconds: (\\d+)")
                    .matcher(manifest);
            assertTrue(grace.find() && Integer.parseInt(grace.group(1)) > c.shutdownTimeout().toSeconds(),
                    "k8s waits longer than the engine's shutdown-timeout before SIGKILL");
            assertEquals("SASL_SSL", c.kafka().client().get("security.protocol"));
            assertEquals("SCRAM-SHA-512", c.kafka().client().get("sasl.mechanism"));
        } finally {
            Files.delete(f);
        }
    }

    @Test
    void dockerfileCopiesEveryModuleOfTheBuild() throws Exception {
        String pom = Files.readString(Fixtures.file("pom.xml"));
        String dockerfile = Files.readString(Fixtures.file("docker/Dockerfile"));
        var modules = java.util.regex.Pattern.compile("<module>([^<]+)</module>").matcher(pom);
        int n = 0;
        while (modules.find()) {
            n++;
            String m = modules.group(1);
            // The module's folder or one above it (testkit/connectors comes with testkit).
            boolean copied = false;
            for (String dir = m; !dir.isEmpty(); dir = dir.contains("/") ? dir.substring(0, dir.lastIndexOf('/')) : "") {
                copied |= dockerfile.contains("COPY " + dir + " " + dir + "\n");
            }
            assertTrue(copied, "docker/Dockerfile does not copy module " + m);
        }
        assertTrue(n >= 4);
    }
}
