package io.samstream.stream.app;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A broker key store (self-signed, for 127.0.0.1) and a trust store holding its certificate, made
 * with the JDK's keytool: what a SASL_SSL test broker and its clients need.
 */
record TestTls(Path keyStore, Path trustStore, String password) {

    static TestTls create(Path dir) throws IOException, InterruptedException {
        String password = "test-store-pass";
        Path keyStore = dir.resolve("broker.p12");
        Path cert = dir.resolve("broker.pem");
        Path trustStore = dir.resolve("trust.p12");
        keytool("-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", "PKCS12",
                "-keystore", keyStore.toString(), "-storepass", password, "-keypass", password);
        keytool("-exportcert", "-rfc", "-alias", "broker", "-keystore", keyStore.toString(), "-storepass", password,
                "-file", cert.toString());
        keytool("-importcert", "-noprompt", "-alias", "broker", "-file", cert.toString(), "-storetype", "PKCS12",
                "-keystore", trustStore.toString(), "-storepass", password);
        return new TestTls(keyStore, trustStore, password);
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool " + args[0] + " failed: " + out.strip());
        }
    }
}
