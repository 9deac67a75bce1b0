package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** docker/app.conf is a valid configuration and agrees with compose.yaml and prometheus.yml. */
class DockerConfigTest {
    @Test
    void composeConfigurationLoads() throws Exception {
        SamstreamConfig c = ConfigLoader.load(Path.of("../docker/app.conf"));
        assertEquals("kafka:9092", c.kafka().bootstrapServers().orElseThrow());
        assertEquals("0.0.0.0", c.metrics().host());
        assertTrue(Files.readString(Path.of("../docker/prometheus.yml")).contains("samstream:" + c.metrics().port()));
        assertTrue(Files.readString(Path.of("../docker/compose.yaml")).contains(c.metrics().port() + ":" + c.metrics().port()));
        assertEquals("samstream.streams", c.streamsTopic().orElseThrow());
    }

    @Test
    void dockerfileCopiesEveryModuleOfTheBuild() throws Exception {
        String pom = Files.readString(Path.of("../pom.xml"));
        String dockerfile = Files.readString(Path.of("../docker/Dockerfile"));
        var modules = java.util.regex.Pattern.compile("<module>([^<]+)</module>").matcher(pom);
        int n = 0;
        while (modules.find()) {
            n++;
            String m = modules.group(1);
            assertTrue(dockerfile.contains("COPY " + m + " " + m), "docker/Dockerfile does not copy module " + m);
        }
        assertTrue(n >= 4);
    }
}
