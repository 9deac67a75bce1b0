package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import io.samstream.connectors.video.DecoderPreference;
import io.samstream.connectors.video.FrameSource;
import io.samstream.connectors.video.FrameSources;
import io.samstream.connectors.video.SourceSpec;
import io.samstream.stream.cli.SamstreamCli;
import io.samstream.testkit.TestModels;
import io.samstream.testkit.connectors.MaskTopics;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code samstream run} in a JVM of its own (CPU, the bundled model, a generated clip), killed with
 * {@code kill -9} mid-run: overlay.mp4 plays up to about a second before the kill, masks.jsonl holds only
 * whole records, and the embedded broker's records are there after the kill and after a restart, which
 * says what it repeats.
 */
@Timeout(300)
class KillNineTest {
    private static final Path MODEL = TestModels.demoSam();
    /** Frames written at least this long before the kill must play. */
    private static final long PLAYABLE_WITHIN_MS = 1_500;

    @TempDir
    Path dir;

    @Test
    void aKilledRunLeavesPlayableVideoWholeLinesAndItsRecordsAndARestartSaysWhatItRepeats() throws Exception {
        Path out = dir.resolve("out");
        Path jsonl = out.resolve("clip").resolve("masks.jsonl");
        Path overlay = out.resolve("clip").resolve("overlay.mp4");
        Path brokerDir = out.resolve("kafka-data"); // the default: under the output folder

        Process run = start(config(out, 5_000), dir.resolve("run-1.log"));
        List<long[]> seen = new ArrayList<>(); // [nanoTime, whole lines]
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        try {
            while (System.nanoTime() < deadline && run.isAlive()) {
                long now = System.nanoTime();
                seen.add(new long[] {now, wholeLines(jsonl)});
                // Killed once 10 records were written at least 1.5 s ago: past the overlay's first fragments.
                if (linesAtLeast(seen, now, PLAYABLE_WITHIN_MS) >= 10) {
                    break;
                }
                Thread.sleep(50);
            }
            assertTrue(run.isAlive(), "the run ended before it could be killed:\n" + log("run-1.log"));
        } finally {
            run.destroyForcibly(); // SIGKILL: no shutdown hook, nothing closed
        }
        long killedAt = System.nanoTime();
        assertTrue(run.waitFor(30, TimeUnit.SECONDS));
        assertEquals(137, run.exitValue(), "killed by SIGKILL");

        long linesBefore = linesAtLeast(seen, killedAt, PLAYABLE_WITHIN_MS); // written 1.5 s before the kill
        List<MaskRecord> written = records(jsonl, true);
        assertTrue(linesBefore >= 5, "too few records before the kill to judge: " + linesBefore);

        // The overlay: its first frame waits for the second (the frame rate), so one less than the records.
        assertTrue(Files.exists(overlay), "no overlay.mp4");
        int played = playableFrames(overlay);
        assertTrue(played >= linesBefore - 1 && played <= written.size(), "overlay.mp4 plays " + played
                + " frames; " + linesBefore + " records were written 1.5 s before the kill, " + written.size() + " at it");

        // The broker's records of the killed run, read from its kept folder.
        List<MaskRecord> inKafka = readBroker(brokerDir, (int) linesBefore);
        System.out.printf("kill -9 after %d records (%d of them 1.5 s before); overlay.mp4 plays %d frames;"
                + " Kafka holds %d%n", written.size(), linesBefore, played, inKafka.size());
        assertTrue(inKafka.size() >= linesBefore, inKafka.size() + " records in Kafka, " + linesBefore + " written");
        for (int i = 0; i < inKafka.size(); i++) {
            assertEquals(i, inKafka.get(i).frame(), "Kafka's record " + i);
        }

        // A restart on the same folders: a short clip of the same stream id, to its end.
        Process again = start(config(out, 6), dir.resolve("run-2.log"));
        assertTrue(again.waitFor(180, TimeUnit.SECONDS), "the restart did not end:\n" + log("run-2.log"));
        String log2 = log("run-2.log");
        assertEquals(0, again.exitValue(), log2);
        long earlier = written.size();
        assertTrue(log2.contains("already holds " + earlier + " records of an earlier run, the last for frame "
                + (earlier - 1) + "; this run starts at frame 0, so frames 0.." + (earlier - 1) + " are written again"),
                log2);
        assertTrue(log2.contains("data in " + brokerDir.toAbsolutePath() + " (reused: samstream.masks holds "), log2);
        assertTrue(log2.contains("kept as overlay.1.mp4"), log2);

        List<MaskRecord> all = records(jsonl, false);
        assertEquals(earlier + 6, all.size(), "the killed run's whole records, then the restart's 6");
        for (int i = 0; i < 6; i++) {
            assertEquals(i, all.get((int) earlier + i).frame());
        }
        assertEquals(played, playableFrames(out.resolve("clip").resolve("overlay.1.mp4")), "the killed run's overlay");
        assertEquals(6, playableFrames(overlay));
        List<MaskRecord> afterRestart = readBroker(brokerDir, inKafka.size() + 6);
        assertEquals(inKafka.size() + 6, afterRestart.size(), "the killed run's records and the restart's");
    }

    private Path config(Path out, int frames) throws IOException {
        return Files.writeString(dir.resolve("app-" + frames + ".conf"), """
                samstream {
                  model.checkpoint = "%s"
                  device = cpu
                  cpu.threads = 1
                  streams = [ { id = clip, location = "testpattern:320x240@12?frames=%d", prompts.grid = 2 } ]
                  sinks { jsonl-dir = "%s", overlay-dir = "%s" }
                  http.enabled = off
                }
                """.formatted(MODEL, frames, out, out));
    }

    /** {@code samstream run -c CONF} in a new JVM with this test's class path, its output to {@code log}. */
    private static Process start(Path conf, Path log) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(java, "-Xmx1g", "-cp", System.getProperty("java.class.path"),
                SamstreamCli.class.getName(), "run", "-c", conf.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private String log(String name) throws IOException {
        return Files.readString(dir.resolve(name), StandardCharsets.UTF_8);
    }

    /** The most lines seen at least {@code ms} before {@code at}. */
    private static long linesAtLeast(List<long[]> seen, long at, long ms) {
        long lines = 0;
        for (long[] s : seen) {
            if (at - s[0] >= TimeUnit.MILLISECONDS.toNanos(ms)) {
                lines = Math.max(lines, s[1]);
            }
        }
        return lines;
    }

    private static long wholeLines(Path file) throws IOException {
        if (!Files.exists(file)) {
            return 0;
        }
        byte[] bytes = Files.readAllBytes(file);
        long n = 0;
        for (byte b : bytes) {
            n += b == '\n' ? 1 : 0;
        }
        return n;
    }

    /**
     * Every line is a whole mask record, frames 0, 1, ... in order. A kill in the middle of writing a
     * line may leave it unfinished at the very end ({@code tailMayBeCut}: the next run cuts it).
     */
    private static List<MaskRecord> records(Path file, boolean tailMayBeCut) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        List<MaskRecord> out = new ArrayList<>();
        int end = text.lastIndexOf('\n') + 1;
        if (!tailMayBeCut) {
            assertEquals(text.length(), end, "masks.jsonl ends in a partial line");
        }
        for (String line : text.substring(0, end).split("\n")) {
            out.add(MaskRecordJson.read(line.getBytes(StandardCharsets.UTF_8)));
        }
        if (tailMayBeCut) {
            for (int i = 0; i < out.size(); i++) {
                assertEquals(i, out.get(i).frame(), "line " + i);
            }
        }
        return out;
    }

    /** Frames FFmpeg decodes from the file; a cut file may end in an error after them. */
    private static int playableFrames(Path file) throws IOException {
        int count = 0;
        try (FrameSource source = FrameSources.open(SourceSpec.of("check", file.toString())
                .withDecoder(DecoderPreference.CPU))) {
            while (source.next() != null) {
                count++;
            }
        } catch (IOException endOfACutFile) {
            assertTrue(count > 0, file + " does not play: " + endOfACutFile.getMessage());
        }
        return count;
    }

    /** Starts a broker on the kept folder, reads the masks topic, stops it (the folder stays). */
    private static List<MaskRecord> readBroker(Path brokerDir, int expected) {
        assertTrue(Files.isDirectory(brokerDir), "no broker folder " + brokerDir);
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().logDir(brokerDir).start()) {
            List<MaskRecord> records = MaskTopics.readAll(broker.bootstrapServers(), "samstream.masks", expected,
                    Duration.ofSeconds(60));
            assertFalse(records.isEmpty(), "no records in the kept broker folder");
            return records;
        }
    }
}
