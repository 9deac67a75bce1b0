package io.samstream.stream.app;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An engine in a JVM of its own ({@code samstream run -c FILE} on this test's class path), its output
 * in a log file: what a failover test kills with SIGKILL.
 */
final class EngineProcess implements AutoCloseable {
    final String name;
    final Path log;
    private final Process process;

    private EngineProcess(String name, Path log, Process process) {
        this.name = name;
        this.log = log;
        this.process = process;
    }

    static EngineProcess start(String name, Path config, Path dir) throws IOException {
        Path log = dir.resolve(name + ".log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-Xmx768m", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), "io.samstream.stream.cli.SamstreamCli", "run",
                "-c", config.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new EngineProcess(name, log, p);
    }

    /** SIGKILL (kill -9): no shutdown hook, no goodbye to the group. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /**
     * SIGTERM (what Ctrl-C and a supervisor's stop send), then waits up to {@code wait} for the exit.
     *
     * @return its exit status, or empty when it still runs
     */
    java.util.OptionalInt terminate(java.time.Duration wait) throws InterruptedException {
        process.destroy();
        return process.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS) ? java.util.OptionalInt.of(process.exitValue())
                : java.util.OptionalInt.empty();
    }

    boolean alive() {
        return process.isAlive();
    }

    List<String> lines() throws IOException {
        return Files.readAllLines(log, StandardCharsets.UTF_8);
    }

    long count(String fragment) throws IOException {
        return lines().stream().filter(l -> l.contains(fragment)).count();
    }

    /** SIGTERM, then SIGKILL after 30 s. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                kill();
            }
        }
    }
}
