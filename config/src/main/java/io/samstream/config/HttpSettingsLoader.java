package io.samstream.config;

import com.typesafe.config.Config;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Reads and validates {@code samstream.http}. An open address without a token is refused here, so the engine never
 * starts serving its API to the network unprotected; errors never quote the token or the key store's password.
 */
final class HttpSettingsLoader {
    private static final String KEY = "samstream.http";
    private static final long MIN_BODY = 1024;
    private static final long MAX_BODY = 16L << 20;

    private HttpSettingsLoader() {}

    static HttpSettings load(Config config, String origin) {
        Config c = config.getConfig(KEY);
        boolean enabled = c.getBoolean("enabled");
        String host = c.getString("host").trim();
        if (host.isEmpty()) {
            throw new ConfigException(origin + ": " + KEY + ".host is empty (127.0.0.1 keeps it local, 0.0.0.0 opens it"
                    + " with a token)");
        }
        int port = c.getInt("port");
        if (port < 0 || port > 65535) {
            throw new ConfigException(origin + ": " + KEY + ".port must be 0 (any free port) to 65535, got " + port);
        }
        String token = c.getString("token").trim();
        if (!token.isEmpty() && !HttpSettings.TOKEN.matcher(token).matches()) {
            throw new ConfigException(origin + ": " + KEY + ".token must be 16 to 512 of A-Z a-z 0-9 . _ ~ + -"
                    + " (e.g. the output of `openssl rand -hex 32`); the value given (" + token.length()
                    + " characters) is not");
        }
        if (enabled && token.isEmpty() && !HttpSettings.isLoopback(host)) {
            throw new ConfigException(origin + ": " + KEY + ".host = " + host + " opens the API to other machines:"
                    + " set " + KEY + ".token (every call must then carry it), or bind 127.0.0.1");
        }
        Optional<HttpSettings.Tls> tls = Optional.empty();
        String keystore = c.getString("tls.keystore").trim();
        if (!keystore.isEmpty()) {
            Path p = ConfigLoader.path(keystore, KEY + ".tls.keystore", origin);
            if (enabled && !Files.isReadable(p)) {
                throw new ConfigException(origin + ": " + KEY + ".tls.keystore: " + p
                        + " is not a readable file (a PKCS#12 key store)");
            }
            tls = Optional.of(new HttpSettings.Tls(p, c.getString("tls.password")));
        }
        int maxViewers = range(c, "max-viewers", 0, 1024, origin);
        int fps = range(c, "preview-fps", 1, 60, origin);
        long body;
        try {
            body = c.getBytes("max-body");
        } catch (com.typesafe.config.ConfigException.BadValue e) {
            throw new ConfigException(origin + ": " + KEY + ".max-body: expected a size such as 64 KiB", e);
        }
        if (body < MIN_BODY || body > MAX_BODY) {
            throw new ConfigException(origin + ": " + KEY + ".max-body must be 1 KiB to 16 MiB, got " + body + " bytes");
        }
        int rate = range(c, "prompt-rate", 1, 10_000, origin);
        return new HttpSettings(enabled, host, port, token.isEmpty() ? Optional.empty() : Optional.of(token), tls,
                maxViewers, fps, (int) body, rate);
    }

    private static int range(Config c, String key, int min, int max, String origin) {
        int v = c.getInt(key);
        if (v < min || v > max) {
            throw new ConfigException(origin + ": " + KEY + "." + key + " must be " + min + " to " + max + ", got " + v);
        }
        return v;
    }
}
