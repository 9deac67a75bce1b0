package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * docs/cluster-walkthrough.md as a user runs it: its marked code blocks, in order, through bash in a folder of
 * their own, {@code ./samstream} being the build's classes (the launcher's jar is made after the tests), the
 * port 9092 replaced by a free one. Long-running steps (the broker, the engines, the tail) are processes of
 * their own, stopped with SIGTERM as Ctrl-C stops them. Each step's output is checked; the page's steps must be
 * exactly the ones this test knows, so the page and the test cannot drift apart.
 */
@Tag("walkthrough")
@Timeout(600)
class ClusterWalkthroughTest {
    static final Path PAGE = Path.of("../docs/cluster-walkthrough.md").toAbsolutePath().normalize();
    /** The page's steps, in order: what this test runs and checks. */
    static final List<String> STEPS = List.of("setup", "broker", "engine e1", "engine e2", "engine e3", "tail", "put",
            "prompt", "stop an engine that runs a stream", "export", "delete");
    private static final Pattern STEP = Pattern.compile(
            "<!-- walkthrough: (.+?) -->\\n(?:```sh\\n(.*?)\\n```)?", Pattern.DOTALL);
    private static final Pattern LINE = Pattern.compile("^stream=(\\S+) frame=(\\d+) .*?(?:engine=(\\S+) )?size=.*$");
    private static final Duration WAIT = Duration.ofSeconds(150);

    private final List<Background> running = new ArrayList<>();
    private Path work;

    /** The page's steps: name to its code block (null for a step without one). */
    static LinkedHashMap<String, String> steps() throws IOException {
        LinkedHashMap<String, String> out = new LinkedHashMap<>();
        Matcher m = STEP.matcher(Files.readString(PAGE));
        while (m.find()) {
            assertFalse(out.containsKey(m.group(1)), "step '" + m.group(1) + "' twice on the page");
            out.put(m.group(1), m.group(2));
        }
        return out;
    }

    @Test
    void thePagesStepsAreTheOnesThisTestRuns() throws Exception {
        assertEquals(STEPS, new ArrayList<>(steps().keySet()), PAGE + " and this test list different steps");
    }

    @Test
    void theWalkthroughRunsAsWritten() throws Exception {
        LinkedHashMap<String, String> page = steps();
        assertEquals(STEPS, new ArrayList<>(page.keySet()));
        int port = freePort();
        Map<String, String> code = new HashMap<>();
        int http = threeFreePorts();
        page.forEach((name, block) -> code.put(name, block == null ? null : block.replace("9092",
                Integer.toString(port)).replace("port=8080", "port=" + http)));
        assertTrue(page.get("broker").contains("--port 9092") && page.get("setup").contains("127.0.0.1:9092"));
        assertTrue(page.get("setup").contains("port=8080"), "the engines' HTTP ports start at 8080");
        work = Files.createTempDirectory(Files.createDirectories(Path.of("target").toAbsolutePath()), "walkthrough-");
        launcher();
        long t0 = System.nanoTime();
        try {
            // 1. The configuration.
            String setup = shell("setup", code.get("setup"));
            for (String f : List.of("cluster.conf", "e1.conf", "e2.conf", "e3.conf")) {
                assertTrue(Files.isRegularFile(work.resolve("cluster").resolve(f)), f + " missing; " + setup);
            }
            // 2. The broker.
            Background broker = start("broker", code.get("broker"));
            await(() -> broker.out().contains("bootstrap servers: 127.0.0.1:" + port), "the broker's address", broker);
            // 3. The engines, in the group before the next step (as the page says to wait for).
            Map<String, Background> engines = new LinkedHashMap<>();
            for (String e : List.of("e1", "e2", "e3")) {
                engines.put(e, start("engine " + e, code.get("engine " + e)));
            }
            for (String e : engines.keySet()) {
                await(() -> engines.get(e).all().contains("cluster: engine " + e + " joined group samstream on"
                        + " samstream.streams"), e + " in the group", engines.get(e));
            }
            System.out.printf("walk-through: three engines in the group after %d s%n", seconds(t0));
            // 4. The tail, 5. the streams.
            Background tail = start("tail", code.get("tail"));
            await(() -> tail.err().contains("samstream: topic samstream.masks does not exist yet")
                    || tail.err().contains("samstream: following samstream.masks"), "the tail started", tail);
            String put = shell("put", code.get("put"));
            for (String id : List.of("cam-1", "cam-2", "cam-3")) {
                assertTrue(put.contains("put " + id + " on samstream.streams (partition "), put);
            }
            assertEquals(List.of("cam-1  live  auto     1 object  testpattern:320x240@2?live=true&seed=1",
                    "cam-2  live  auto     1 object  testpattern:320x240@2?live=true&seed=2",
                    "cam-3  live  auto     grid 2x2  testpattern:320x240@2?live=true&seed=3"),
                    put.lines().filter(l -> l.startsWith("cam-")).toList(), put);
            await(() -> seen(tail).keySet().containsAll(List.of("cam-1", "cam-2", "cam-3")),
                    "the tail showing every stream", tail);
            System.out.printf("walk-through: every stream published after %d s%n", seconds(t0));

            // 6. A new object on cam-1: the tail shows it in cam-1's records from then on.
            int before = lines(tail).size();
            String prompt = shell("prompt", code.get("prompt"));
            assertTrue(prompt.contains("sent add of object 7 to stream cam-1 (topic samstream.prompts, partition "),
                    prompt);
            await(() -> since(tail, before).stream()
                    .anyMatch(l -> l.startsWith("stream=cam-1 ") && ids(l).contains(7)), "object 7 in cam-1", tail);

            // 7. An engine that runs a stream stops (Ctrl-C): its streams go on on the others, with their ids.
            Map<String, String> owners = owners(lines(tail));
            String victim = owners.values().stream().collect(Collectors.groupingBy(e -> e, Collectors.counting()))
                    .entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
            Set<String> moved = new TreeSet<>();
            owners.forEach((stream, engine) -> {
                if (engine.equals(victim)) {
                    moved.add(stream);
                }
            });
            Map<String, Set<Integer>> idsBefore = idsByStream(lines(tail));
            int stoppedAt = lines(tail).size();
            long stopped = System.nanoTime();
            engines.get(victim).signal();
            // Its streams move once the group notices it gone (the session timeout), whether or not it ended yet.
            engines.get(victim).awaitEnd();
            assertTrue(engines.get(victim).all().contains("stopping: publishing what was decoded, then closing"),
                    engines.get(victim).all());
            await(() -> moved.stream().allMatch(s -> since(tail, stoppedAt).stream()
                    .anyMatch(l -> l.startsWith("stream=" + s + " ") && !victim.equals(engine(l)))),
                    "the streams of " + victim + " " + moved + " on another engine", tail);
            System.out.printf("walk-through: %s stopped, its streams %s published by another engine after %d s%n",
                    victim, moved, seconds(stopped));
            Map<String, Set<Integer>> idsAfter = idsByStream(since(tail, stoppedAt));
            for (String s : moved) {
                assertTrue(idsBefore.get(s).containsAll(idsAfter.getOrDefault(s, Set.of())),
                        s + ": ids before " + idsBefore.get(s) + ", after the move " + idsAfter.get(s));
            }

            // 8. Masks to files.
            String export = shell("export", code.get("export"));
            Matcher wrote = Pattern.compile("wrote (\\d+) masks of (\\d+) frames of stream cam-2 to cluster/cam-2-masks")
                    .matcher(export);
            assertTrue(wrote.find(), export);
            int frames = Integer.parseInt(wrote.group(2));
            assertTrue(frames >= 1 && frames <= 5, export);
            // Frame 0 holds the object as the box prompted it (seeded as given): at least that mask.
            assertTrue(Integer.parseInt(wrote.group(1)) >= 1, export);
            assertTrue(Files.isRegularFile(work.resolve("cluster/cam-2-masks/frame-000000-object-1.png")), export);
            try (var files = Files.list(work.resolve("cluster/cam-2-masks"))) {
                List<String> pngs = files.map(p -> p.getFileName().toString()).toList();
                assertEquals(Integer.parseInt(wrote.group(1)), pngs.size(), pngs.toString());
                assertTrue(pngs.stream().allMatch(n -> n.matches("frame-\\d{6}-object-\\d+\\.png")), pngs.toString());
            }

            // 9. cam-3 removed: gone from the topic, stopped by the engine that ran it.
            String delete = shell("delete", code.get("delete"));
            assertTrue(delete.contains("deleted cam-3 from samstream.streams"), delete);
            assertEquals(List.of("cam-1", "cam-2"), delete.lines().filter(l -> l.startsWith("cam-"))
                    .map(l -> l.split(" ")[0]).toList(), delete);
            await(() -> engines.values().stream().anyMatch(e -> e.all().contains("stream definitions: cam-3 removed")),
                    "an engine removing cam-3", tail);
            System.out.printf("walk-through: all steps after %d s%n", seconds(t0));

            // Ctrl-C everywhere: the tail says what it printed, the broker that it stopped.
            tail.stop();
            assertTrue(tail.err().contains("samstream: masks tail: " + lines(tail).size() + " record(s)"), tail.all());
            engines.values().forEach(Background::signal);
            for (Background e : engines.values()) {
                e.awaitEnd();
            }
            broker.stop();
            assertTrue(broker.out().contains("samstream broker: stopped (data kept in "), broker.out());
        } finally {
            for (Background b : running) {
                b.kill();
            }
        }
    }

    /** The launcher's stand-in in the work folder: the same CLI on the build's classes (main logging set-up). */
    private void launcher() throws IOException {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String main = List.of(cp.split(File.pathSeparator)).stream()
                .filter(e -> !e.replace('\\', '/').endsWith("stream/target/test-classes"))
                .collect(Collectors.joining(File.pathSeparator));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path script = work.resolve("samstream");
        Files.writeString(script, """
                #!/usr/bin/env bash
                # ClusterWalkthroughTest's ./samstream: the CLI on the build's classes, as the launcher runs the jar.
                case "$1" in run) opts="-Xmx768m" ;; *) opts="-Xmx256m -XX:TieredStopAtLevel=1" ;; esac
                # Three engines at work starve a loaded 2-core machine's broker: the commands wait longer for it.
                export SAMSTREAM_KAFKA_TIMEOUT=${SAMSTREAM_KAFKA_TIMEOUT:-120}
                exec '%s' -XX:+UseSerialGC $opts -cp '%s' io.samstream.stream.cli.SamstreamCli "$@"
                """.formatted(java, main));
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    /** Runs a block with bash (stopping at the first failing command); its output, stdout then stderr. */
    private String shell(String step, String block) throws Exception {
        Path out = work.resolve(step.replace(' ', '-') + ".out");
        Path err = work.resolve(step.replace(' ', '-') + ".err");
        Process p = new ProcessBuilder("bash", "-e", "-c", block).directory(work.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        boolean ended = false;
        try {
            ended = p.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS);
        } finally {
            if (!ended) {
                killTree(p);
            }
        }
        String all = Files.readString(out) + Files.readString(err);
        assertTrue(ended && p.exitValue() == 0, step + ": " + (ended ? "exit " + p.exitValue() : "still running")
                + "\n" + block + "\n" + all);
        return all;
    }

    /** A step that runs until stopped: its one command, exec'd by bash so that SIGTERM reaches the JVM. */
    private Background start(String step, String block) throws IOException {
        assertEquals(1, block.lines().count(), step + ": one command");
        Path out = work.resolve(step.replace(' ', '-') + ".out");
        Path err = work.resolve(step.replace(' ', '-') + ".err");
        Process p = new ProcessBuilder("bash", "-c", "exec " + block).directory(work.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        Background b = new Background(step, p, out, err);
        running.add(b);
        return b;
    }

    /** A process of a long-running step and its output files. */
    static final class Background {
        final String step;
        final Process process;
        private final Path outFile;
        private final Path errFile;
        /** Stopped on purpose: its end is no failure. */
        private volatile boolean stopping;

        Background(String step, Process process, Path outFile, Path errFile) {
            this.step = step;
            this.process = process;
            this.outFile = outFile;
            this.errFile = errFile;
        }

        String out() {
            return read(outFile);
        }

        String err() {
            return read(errFile);
        }

        /** Both: where a log line lands depends on the logging set-up on the class path. */
        String all() {
            return out() + err();
        }

        private static String read(Path f) {
            try {
                return Files.readString(f, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        /** SIGTERM: what Ctrl-C does to the JVM (its shutdown hooks run). */
        void signal() {
            stopping = true;
            process.destroy();
        }

        /** Waits for it to end after {@link #signal}: an engine publishes what it decoded first. */
        void awaitEnd() throws InterruptedException {
            assertTrue(process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS), step + " did not stop");
        }

        void stop() throws InterruptedException {
            signal();
            awaitEnd();
        }

        void kill() throws InterruptedException {
            stopping = true;
            killTree(process);
        }
    }

    /** SIGKILL to a process and whatever it started (a bash block's commands). */
    static void killTree(Process p) throws InterruptedException {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
    }

    private void await(BooleanSupplier condition, String what, Background watched) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            for (Background b : running) {
                if (!b.stopping && !b.process.isAlive()) {
                    throw new AssertionError(b.step + " ended (exit " + b.process.exitValue() + ") while waiting for "
                            + what + "\nstdout:\n" + b.out() + "\nstderr:\n" + b.err());
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + what + " within " + WAIT.toSeconds() + " s (logs in " + work
                        + ")\n" + watched.step + " stdout:\n" + watched.out() + "\nstderr:\n" + watched.err());
            }
            Thread.sleep(200);
        }
    }

    /** The tail's record lines so far. */
    private static List<String> lines(Background tail) {
        return tail.out().lines().filter(l -> l.startsWith("stream=")).toList();
    }

    /** The tail's record lines from index {@code from} on, read once (the tail grows while we look). */
    private static List<String> since(Background tail, int from) {
        List<String> all = lines(tail);
        return all.subList(from, all.size());
    }

    /** Stream to the number of records the tail showed of it. */
    private static Map<String, Integer> seen(Background tail) {
        Map<String, Integer> n = new HashMap<>();
        lines(tail).forEach(l -> n.merge(stream(l), 1, Integer::sum));
        return n;
    }

    /** Stream to the engine of its latest record. */
    private static Map<String, String> owners(List<String> lines) {
        Map<String, String> out = new HashMap<>();
        for (String l : lines) {
            if (engine(l) != null) {
                out.put(stream(l), engine(l));
            }
        }
        return out;
    }

    private static Map<String, Set<Integer>> idsByStream(List<String> lines) {
        Map<String, Set<Integer>> out = new HashMap<>();
        lines.forEach(l -> out.computeIfAbsent(stream(l), s -> new HashSet<>()).addAll(ids(l)));
        return out;
    }

    private static String stream(String line) {
        Matcher m = LINE.matcher(line);
        assertTrue(m.matches(), line);
        return m.group(1);
    }

    private static String engine(String line) {
        Matcher m = LINE.matcher(line);
        assertTrue(m.matches(), line);
        return m.group(3);
    }

    /** Every object id a line names: in objects, hidden and lost. */
    static Set<Integer> ids(String line) {
        Set<Integer> ids = new HashSet<>();
        Matcher objects = Pattern.compile("(?:\\[|; )(\\d+) score=").matcher(line);
        while (objects.find()) {
            ids.add(Integer.parseInt(objects.group(1)));
        }
        Matcher lists = Pattern.compile(" (?:hidden|lost)=\\[([\\d,]+)]").matcher(line);
        while (lists.find()) {
            for (String id : lists.group(1).split(",")) {
                ids.add(Integer.parseInt(id));
            }
        }
        return ids;
    }

    private static long seconds(long since) {
        return (System.nanoTime() - since) / 1_000_000_000L;
    }

    /** The first of three consecutive free ports (the engines' HTTP servers). */
    private static int threeFreePorts() throws IOException {
        for (int tries = 0; tries < 50; tries++) {
            int p = freePort();
            if (p < 65533 && bindable(p + 1) && bindable(p + 2)) {
                return p;
            }
        }
        throw new IOException("no three consecutive free ports");
    }

    private static boolean bindable(int p) {
        try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            return s.getLocalPort();
        }
    }
}
