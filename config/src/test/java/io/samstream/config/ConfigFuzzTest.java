package io.samstream.config;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.samstream.testkit.FuzzBounds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Fuzz targets of the configuration: any text as an app.conf file ({@link ConfigLoader#load(Path)}),
 * and any streams-topic record (key, newline, JSON value: {@link StreamSpecs#fromJson}) give a valid
 * configuration or a one-line {@link ConfigException}, within {@link FuzzBounds}.
 */
class ConfigFuzzTest {
    private static final Path DIR = FuzzBounds.tempDir();
    private static final StreamDefaults DEFAULTS = ConfigLoader.load().streamDefaults();

    @FuzzTest(maxDuration = "10m")
    void configFile(byte[] hocon) throws IOException {
        Path file = Files.write(DIR.resolve("app.conf"), hocon);
        FuzzBounds.check(() -> ConfigLoader.load(file), ConfigException.class);
    }

    @FuzzTest(maxDuration = "10m")
    void streamDefinition(byte[] record) {
        int nl = -1;
        for (int i = 0; i < record.length && nl < 0; i++) {
            nl = record[i] == '\n' ? i : -1;
        }
        String key = nl < 0 ? "cam-1" : new String(record, 0, nl, StandardCharsets.UTF_8);
        String json = new String(nl < 0 ? record : Arrays.copyOfRange(record, nl + 1, record.length),
                StandardCharsets.UTF_8);
        FuzzBounds.check(() -> StreamSpecs.fromJson(key, json, DEFAULTS), ConfigException.class);
    }
}
