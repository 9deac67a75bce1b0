package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code samstream demo} and {@code samstream run} as a user runs them (the tiny model, for speed). */
@Timeout(240)
class EngineCommandsTest {
    static final String TINY = Path.of("../gpu/src/test/resources/fixtures/tiny256/model.pth").toAbsolutePath().toString();

    @TempDir
    Path dir;

    @Test
    void demoPublishesReadsBackAndWritesItsFiles() throws Exception {
        Path conf = Files.writeString(dir.resolve("demo.conf"), "samstream { model.checkpoint = \"" + TINY
                + "\", device = cpu, cpu.threads = 2 }");
        Path out = dir.resolve("demo");
        // An earlier demo's files in the folder are replaced, not appended to.
        Files.createDirectories(out);
        Files.writeString(out.resolve("masks.jsonl"), "{\"from\":\"an earlier demo\"}\n{\"from\":\"it too\"}\n");
        Result r = run("demo", "-c", conf.toString(), "--out", out.toString(), "--frames", "5");
        assertEquals(0, r.code, r.all());
        assertTrue(r.out.contains("read back from Kafka: 5 records (5 published)"), r.all());
        assertTrue(r.out.contains("frames 0..4 in order"), r.all());
        assertEquals(5, Files.readAllLines(out.resolve("masks.jsonl")).size(), "this run's 5 records only");
        assertTrue(Files.size(out.resolve("overlay.mp4")) > 0);
    }

    @Test
    void runEndsWhenItsFilesEndedAndFailsWhenOneFailed() throws Exception {
        Path junk = Files.write(dir.resolve("junk.mp4"), new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        Path out = dir.resolve("streams");
        Path conf = Files.writeString(dir.resolve("app.conf"), """
                samstream {
                  model.checkpoint = "%s"
                  device = cpu
                  gpus = [0, 1]   # ignored on the CPU: one backend
                  streams = [
                    { id = pattern, location = "testpattern:64x48@10?frames=4", prompts.grid = 1 }
                    { id = junk, location = "%s" }
                  ]
                  sinks { kafka = off, jsonl-dir = "%s" }
                  metrics.enabled = off
                }
                """.formatted(TINY, junk, out));
        Result r = run("run", "-c", conf.toString());
        assertEquals(1, r.code, r.all());
        assertTrue(r.out.contains("pattern: ended, 4 frames published"), r.all());
        assertTrue(r.out.contains("junk: failed") && r.out.contains("junk.mp4"), r.all());
        assertEquals(4, Files.readAllLines(out.resolve("pattern").resolve("masks.jsonl")).size());
    }

    @Test
    void runWithoutStreamsSaysSo() throws Exception {
        Path conf = Files.writeString(dir.resolve("empty.conf"), "samstream.device = cpu");
        Result r = run("run", "-c", conf.toString());
        assertEquals(2, r.code, r.all());
        assertTrue(r.err.contains("nothing to run"), r.all());
    }

    record Result(int code, String out, String err) {
        String all() {
            return "exit " + code + "\nstdout:\n" + out + "\nstderr:\n" + err;
        }
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SamstreamCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(code, out.toString(), err.toString());
    }
}
