package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import io.samstream.testkit.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** docker/app.conf is a valid configuration and agrees with compose.yaml and prometheus.yml. */
class DockerConfigTest {
    @Test
    void composeConfigurationLoads() throws Exception {
        SamstreamConfig c = ConfigLoader.load(Fixtures.file("docker/app.conf"));
        assertEquals("kafka:9092", c.kafka().bootstrapServers().orElseThrow());
        assertEquals("0.0.0.0", c.metrics().host());
        assertTrue(Files.readString(Fixtures.file("docker/prometheus.yml")).contains("samstream:" + c.metrics().port()));
        assertTrue(Files.readString(Fixtures.file("docker/compose.yaml")).contains(c.metrics().port() + ":" + c.metrics().port()));
        assertEquals("samstream.streams", c.streamsTopic().orElseThrow());
        String compose = Files.readString(Fixtures.file("docker/compose.yaml"));
        assertTrue(c.cluster().enabled(), "the compose file's engines are one cluster");
        assertTrue(compose.contains("samstream-2:") && compose.contains("--partitions " + c.cluster().partitions()),
                "two engines; the seeded streams topic has cluster.partitions partitions");
        assertTrue(Files.readString(Fixtures.file("docker/prometheus.yml")).contains("samstream-2:" + c.metrics().port()));
        // SASL (docs/security-acls.md): the engines authenticate as samstream-engine, the broker authorizes.
        assertEquals("SASL_PLAINTEXT", c.kafka().client().get("security.protocol"));
        assertTrue(c.kafka().client().get("sasl.jaas.config").contains("username=\"samstream-engine\""));
        assertTrue(compose.contains("KAFKA_AUTHORIZER_CLASS_NAME: org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                && compose.contains("--allow-principal $$E --operation Read --operation Write --operation Describe"
                        + " --topic samstream.state"), "ACLs in compose.yaml");
    }

    @Test
    void kubernetesConfigurationLoads() throws Exception {
        String manifest = Files.readString(Fixtures.file("docker/k8s/samstream.yaml"));
        String conf = manifest.substring(manifest.indexOf("app.conf: |") + "app.conf: |".length(), manifest.indexOf("---"));
        Path f = Files.createTempFile("k8s-app", ".conf");
        try {
            Files.writeString(f, conf);
            SamstreamConfig c = ConfigLoader.load(f);
            assertTrue(c.cluster().enabled());
            assertTrue(c.cluster().instanceId().isEmpty(), "the pod name is the instance id");
            assertTrue(manifest.contains("containerPort: " + c.metrics().port()));
            assertTrue(manifest.contains("kind: StatefulSet") && manifest.contains("nvidia.com/gpu: 1"));
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
