package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.stream.engine.PromptMessage;
import io.samstream.testkit.connectors.KafkaBrokerExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code samstream prompts add|update|remove|reset}: messages the engine's parser reads as given, keyed by stream
 * so that in a cluster they land in the partition of the stream's definition; bad input refused with the
 * engine's own reason, nothing sent; a stream no engine knows refused unless --no-check.
 */
@Timeout(180)
class PromptsCommandTest {
    @RegisterExtension
    static final KafkaBrokerExtension kafka = KafkaBrokerExtension.create();

    @TempDir
    Path dir;

    /** A cluster of 5 partitions with its own streams and prompts topics ({@code name}-streams, -prompts). */
    private Path config(String name) throws Exception {
        return Files.writeString(dir.resolve(name + ".conf"), """
                samstream {
                  kafka { bootstrap-servers = "%s", prompts-topic = "%s-prompts" }
                  streams-topic = "%s-streams"
                  streams = [{ id = from-file, location = "/v.mp4" }]
                  cluster { enabled = on, partitions = 5 }
                }
                """.formatted(kafka.bootstrapServers(), name, name));
    }

    @Test
    void everyOpIsSentAsTheEngineReadsItInTheStreamsPartition() throws Exception {
        String c = config("ops").toString();
        for (String id : List.of("cam-1", "cam-2", "cam-3")) {
            assertEquals(0, CliRun.run("streams", "put", id, "-c", c, "--location", "/" + id + ".mp4").code());
        }
        CliRun.Result r = CliRun.run("prompts", "add", "-c", c, "--stream", "cam-2", "--object", "7", "--point", "40,30",
                "--point", "5.5,6,0", "--box", "10,10,80,70", "--frame", "12");
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().startsWith("sent add of object 7 to stream cam-2 (topic ops-prompts, partition "), r.all());
        assertTrue(r.out().trim().endsWith("applies from frame 12"), r.all());
        r = CliRun.run("prompts", "update", "-c", c, "--stream", "cam-2", "--object", "7", "--box", "1,2,3,4");
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().trim().endsWith("applies from the stream's next frame"), r.all());
        assertEquals(0, CliRun.run("prompts", "remove", "-c", c, "--stream", "cam-3", "--object", "1000004").code(),
                "a discovered object can be removed");
        assertEquals(0, CliRun.run("prompts", "reset", "-c", c, "--stream", "cam-1").code());
        assertEquals(0, CliRun.run("prompts", "add", "-c", c, "--stream", "from-file", "--object", "1", "--point",
                "3,3").code(), "a stream of the configuration's samstream.streams needs no definition on the topic");
        r = CliRun.run("prompts", "concept", "-c", c, "--stream", "cam-1", "--text", " forklift ", "--frame", "3");
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().startsWith("sent concept \"forklift\" to stream cam-1 "), r.all());
        assertEquals(0, CliRun.run("prompts", "remove-concept", "-c", c, "--stream", "cam-3", "--text", "pallet")
                .code());
        r = CliRun.run("prompts", "concept", "-c", c, "--stream", "cam-1", "--text", " ");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.all().contains("(bad_concept)"), r.all());

        KafkaClients clients = KafkaClients.plaintext(kafka.bootstrapServers());
        List<ConsumerRecord<String, byte[]>> prompts = new ArrayList<>();
        TopicReads.readToEnd(clients, "ops-prompts", Duration.ofSeconds(30), prompts::add);
        List<ConsumerRecord<String, byte[]>> defs = new ArrayList<>();
        TopicReads.readToEnd(clients, "ops-streams", Duration.ofSeconds(30), defs::add);
        List<String> values = new ArrayList<>();
        for (ConsumerRecord<String, byte[]> p : prompts) {
            String value = new String(p.value(), StandardCharsets.UTF_8);
            values.add(value);
            PromptMessage m = PromptMessage.parse(p.key(), p.value()); // the key names the stream, as the engine checks
            assertEquals(p.key(), m.stream());
            defs.stream().filter(d -> d.key().equals(p.key())).findFirst().ifPresent(d ->
                    assertEquals(d.partition(), p.partition(), p.key() + ": the prompt is in its definition's partition"));
        }
        values.sort(null);
        assertEquals(List.of(
                "{\"stream\":\"cam-1\",\"op\":\"concept\",\"text\":\"forklift\",\"frame\":3}",
                "{\"stream\":\"cam-1\",\"op\":\"reset\"}",
                "{\"stream\":\"cam-2\",\"op\":\"add\",\"object\":7,\"points\":[[40,30,1],[5.5,6,0]],\"box\":[10,10,80,70],"
                        + "\"frame\":12}",
                "{\"stream\":\"cam-2\",\"op\":\"update\",\"object\":7,\"box\":[1,2,3,4]}",
                "{\"stream\":\"cam-3\",\"op\":\"remove\",\"object\":1000004}",
                "{\"stream\":\"cam-3\",\"op\":\"remove-concept\",\"text\":\"pallet\"}",
                "{\"stream\":\"from-file\",\"op\":\"add\",\"object\":1,\"points\":[[3,3,1]]}"), values);
        PromptMessage add = PromptMessage.parse("cam-2", values.get(2));
        assertEquals(OptionalLong.of(12), add.frame());
        assertArrayEquals(new double[] {5.5, 6, 0}, add.prompt().points()[1]);
    }

    @Test
    void badInputIsRefusedWithTheEnginesReasonAndNothingIsSent() throws Exception {
        String c = config("bad").toString();
        assertEquals(0, CliRun.run("streams", "put", "cam", "-c", c, "--location", "/cam.mp4").code());
        String[][] cases = {
            {"add --stream cam --object 1 --point 40,x", "2",
                "Invalid value for option '--point' (X,Y[,LABEL]): point '40,x' must be X,Y[,LABEL] with numbers"},
            {"add --stream cam --object 1 --point 40,30,2", "2", "point '40,30,2' has label 2"},
            {"add --stream cam --object 1 --point -4,3", "2", "point 0: the coordinate -4.0 is negative (bad_coordinate)"},
            {"add --stream cam --object 1", "2", "add of object 1 needs \"points\" or a \"box\" (missing_prompt)"},
            {"add --stream cam --object 1000000 --point 1,1", "2", "add: \"object\" must be 0 to 999999"},
            {"add --stream cam --object -1 --point 1,1", "2", "\"object\" must be an object id (0 or more), got -1"},
            {"add --stream cam --point 1,1", "2", "Missing required option: '--object=N'"},
            {"update --stream cam --object 1 --box 9,9,2,2", "2",
                "box [9.0,9.0,2.0,2.0]: corners swapped or empty, expected x1 > x0 and y1 > y0 (bad_box)"},
            {"remove --stream cam --object 1 --frame -1", "2", "\"frame\" must be a frame number (0 or more), got -1"},
            {"move --stream cam", "2", "unknown command 'move' for 'samstream prompts' (one of: add, concept, remove, remove-concept, reset, update)"},
            {"add --stream nope --object 1 --point 1,1", "1", "stream 'nope' is not defined on topic bad-streams"
                + " (defined: cam); --no-check sends it anyway"},
            {"reset --stream two words", "2", "Unmatched argument at index 4: 'words'"},
        };
        for (String[] bad : cases) {
            List<String> args = new ArrayList<>(List.of("prompts"));
            args.addAll(List.of(bad[0].split(" ")));
            args.addAll(List.of("-c", c));
            CliRun.Result r = CliRun.run(args.toArray(String[]::new));
            assertEquals(Integer.parseInt(bad[1]), r.code(), bad[0] + ": " + r.all());
            assertTrue(r.err().lines().findFirst().orElseThrow().contains(bad[2]), bad[0] + ": " + r.all());
        }
        List<String> sent = new ArrayList<>();
        TopicReads.readToEnd(KafkaClients.plaintext(kafka.bootstrapServers()), "bad-prompts", Duration.ofSeconds(30),
                r -> sent.add(r.key()));
        assertEquals(List.of(), sent, "nothing was sent");

        CliRun.Result r = CliRun.run("prompts", "add", "-c", c, "--stream", "nope", "--object", "1", "--point", "1,1",
                "--no-check");
        assertEquals(0, r.code(), r.all());
        TopicReads.readToEnd(KafkaClients.plaintext(kafka.bootstrapServers()), "bad-prompts", Duration.ofSeconds(30),
                rec -> sent.add(rec.key()));
        assertEquals(List.of("nope"), sent, "--no-check sends it");
    }

    /** Without a streams topic nothing can be checked: sent, and stderr says it was not checked. */
    @Test
    void withoutAStreamsTopicTheStreamIsNotCheckedAndThatIsSaid() throws Exception {
        CliRun.Result r = CliRun.run("prompts", "reset", "--bootstrap", kafka.bootstrapServers(), "--stream", "any");
        assertEquals(0, r.code(), r.all());
        assertTrue(r.err().contains("samstream: note: stream any not checked: no streams topic"), r.all());
        assertTrue(r.out().startsWith("sent reset to stream any (topic samstream.prompts, partition 0,"), r.all());
    }
}
