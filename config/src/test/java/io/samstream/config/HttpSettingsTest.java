package io.samstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code samstream.http}: defaults, limits, and an open address refused without a token. */
class HttpSettingsTest {
    static final String TOKEN = "0123456789abcdef0123456789abcdef";
    @TempDir
    Path dir;

    @Test
    void defaultsAreLocalWithoutToken() {
        HttpSettings h = ConfigLoader.load().http();
        assertEquals(HttpSettings.DEFAULTS, h);
        assertTrue(h.enabled());
        assertEquals("127.0.0.1", h.host());
        assertEquals(8080, h.port());
        assertTrue(h.token().isEmpty());
        assertTrue(h.tls().isEmpty());
        assertEquals(8, h.maxViewers());
        assertEquals(10, h.previewFps());
        assertEquals(64 * 1024, h.maxBodyBytes());
        assertEquals(20, h.promptRate());
    }

    @Test
    void everyKeyIsRead() throws IOException {
        Path ks = Files.writeString(dir.resolve("server.p12"), "not checked here, only that it can be read");
        HttpSettings h = load("samstream.http { host = \"0.0.0.0\", port = 0, token = \"" + TOKEN + "\","
                + " tls { keystore = \"" + ks + "\", password = secret }, max-viewers = 3, preview-fps = 5,"
                + " max-body = 2 KiB, prompt-rate = 7 }");
        assertEquals(new HttpSettings(true, "0.0.0.0", 0, Optional.of(TOKEN), Optional.of(new HttpSettings.Tls(ks,
                "secret")), 3, 5, 2048, 7), h);
        assertFalse(h.toString().contains(TOKEN), "the token never reaches a log through toString");
        assertFalse(h.toString().contains("secret"), "nor the key store's password");
    }

    @Test
    void anOpenAddressWithoutTokenIsRefusedInOneLine() {
        ConfigException e = assertThrows(ConfigException.class, () -> load("samstream.http.host = \"0.0.0.0\""));
        assertTrue(e.getMessage().contains("samstream.http.host = 0.0.0.0") && e.getMessage().contains("token"),
                e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line");
        assertThrows(ConfigException.class, () -> load("samstream.http.host = \"192.168.1.4\""));
        assertThrows(ConfigException.class, () -> load("samstream.http.host = \"camera-host.example\""));
        // Off, it binds nothing: nothing to refuse.
        assertFalse(assertDoesNotThrowLoad("samstream.http { host = \"0.0.0.0\", enabled = off }").enabled());
    }

    @Test
    void loopbackAddressesNeedNoToken() throws IOException {
        for (String host : new String[] {"127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"}) {
            assertEquals(host, load("samstream.http.host = \"" + host + "\"").host());
        }
        assertFalse(HttpSettings.isLoopback("127.0.0.300"));
        assertFalse(HttpSettings.isLoopback("0.0.0.0"));
        assertFalse(HttpSettings.isLoopback("localhost.evil.example"));
    }

    @Test
    void badValuesNameTheKeyButNeverQuoteTheToken() {
        String weak = "short";
        ConfigException e = assertThrows(ConfigException.class, () -> load("samstream.http.token = " + weak));
        assertTrue(e.getMessage().contains("samstream.http.token"), e.getMessage());
        assertFalse(e.getMessage().contains("= " + weak) || e.getMessage().contains("'" + weak), e.getMessage());
        assertThrows(ConfigException.class, () -> load("samstream.http.token = \"" + TOKEN + " with spaces\""));
        assertMessage("samstream.http.port = 70000", "samstream.http.port");
        assertMessage("samstream.http.host = \"\"", "samstream.http.host is empty");
        assertMessage("samstream.http.max-viewers = -1", "samstream.http.max-viewers");
        assertMessage("samstream.http.preview-fps = 0", "samstream.http.preview-fps");
        assertMessage("samstream.http.max-body = 100 MiB", "samstream.http.max-body");
        assertMessage("samstream.http.max-body = lots", "samstream.http.max-body");
        assertMessage("samstream.http.prompt-rate = 0", "samstream.http.prompt-rate");
        assertMessage("samstream.http.tls.keystore = \"" + dir.resolve("missing.p12") + "\"",
                "samstream.http.tls.keystore", "missing.p12");
        assertMessage("samstream.http.allow-origin = \"*\"", "unknown key samstream.http.allow-origin");
    }

    private HttpSettings assertDoesNotThrowLoad(String conf) {
        try {
            return load(conf);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private void assertMessage(String conf, String... parts) {
        ConfigException e = assertThrows(ConfigException.class, () -> load(conf));
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), e.getMessage() + " should contain " + p);
        }
    }

    private HttpSettings load(String conf) throws IOException {
        Path f = Files.createTempFile(dir, "app", ".conf");
        Files.writeString(f, conf);
        return ConfigLoader.load(f).http();
    }
}
