package io.samstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
    @TempDir
    Path dir;

    @Test
    void defaultsComeFromReferenceConf() {
        SamstreamConfig c = ConfigLoader.load();
        assertEquals(Device.AUTO, c.device());
        assertTrue(c.checkpoint().isEmpty());
        assertEquals(Runtime.getRuntime().availableProcessors(), c.cpuThreads());
    }

    @Test
    void fileOverridesDefaults() throws IOException {
        Path f = write("samstream { device = cpu, cpu.threads = 3, model.checkpoint = \"/models/sam_vit_b.pth\" }");
        SamstreamConfig c = ConfigLoader.load(f);
        assertEquals(Device.CPU, c.device());
        assertEquals(3, c.cpuThreads());
        assertEquals(Path.of("/models/sam_vit_b.pth"), c.checkpoint().orElseThrow());
    }

    @Test
    void unknownKeyIsNamed() throws IOException {
        Path f = write("samstream { cpu.thread = 3 }");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.cpu.thread"), e.getMessage());
        assertTrue(e.getMessage().startsWith(f.toString()), e.getMessage());
    }

    @Test
    void badDeviceNamesKeyAndChoices() throws IOException {
        Path f = write("samstream.device = tpu");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.device"), e.getMessage());
        assertTrue(e.getMessage().contains("auto, cpu or cuda"), e.getMessage());
    }

    @Test
    void wrongTypeNamesKey() throws IOException {
        Path f = write("samstream.cpu.threads = many");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("cpu.threads"), e.getMessage());
    }

    @Test
    void negativeThreadsRejected() throws IOException {
        Path f = write("samstream.cpu.threads = -2");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.cpu.threads must be 0"), e.getMessage());
    }

    @Test
    void missingFileAndSyntaxErrorsNameTheFile() throws IOException {
        Path missing = dir.resolve("nope.conf");
        assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(missing)).getMessage()
                .contains("nope.conf"));
        Path broken = write("samstream { device = ");
        assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(broken)).getMessage()
                .startsWith(broken.toString()));
    }

    private Path write(String text) throws IOException {
        Path f = Files.createTempFile(dir, "app", ".conf");
        Files.writeString(f, text);
        return f;
    }
}
