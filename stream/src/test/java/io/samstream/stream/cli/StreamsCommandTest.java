package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.StreamDefaults;
import io.samstream.config.StreamSpec;
import io.samstream.config.StreamSpecs;
import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.testkit.connectors.KafkaBrokerExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code samstream streams list|put|delete} against a real broker: definitions written as the engine reads them
 * (checked by its parser), the topic made as the engines make it, passwords never shown, and every kind of bad
 * input refused with one line naming the field, nothing written.
 */
@Timeout(180)
class StreamsCommandTest {
    @RegisterExtension
    static final KafkaBrokerExtension kafka = KafkaBrokerExtension.create();

    @TempDir
    Path dir;

    /** A configuration of a cluster of 4 partitions whose streams topic is {@code topic}. */
    private Path config(String topic) throws Exception {
        return Files.writeString(dir.resolve(topic + ".conf"), """
                samstream {
                  kafka.bootstrap-servers = "%s"
                  streams-topic = "%s"
                  cluster { enabled = on, partitions = 4 }
                }
                """.formatted(kafka.bootstrapServers(), topic));
    }

    @Test
    void putListAndDeleteAsTheEngineReadsThem() throws Exception {
        String c = config("defs").toString();
        CliRun.Result r = CliRun.run("streams", "list", "-c", c);
        assertEquals(0, r.code(), r.all());
        assertEquals("no streams defined on topic defs (the topic does not exist yet)\n", r.out());

        r = CliRun.run("streams", "put", "cam-1", "-c", c, "--location", "rtsp://admin:s3cretPW@10.0.0.5:554/live",
                "--object", "3", "--box", "10,20,110,220", "--point", "60,120", "--point", "5,5,0");
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().startsWith("put cam-1 on defs (partition "), r.all());
        assertTrue(r.out().contains("rtsp://admin:***@10.0.0.5:554/live, live, decoder auto"), r.all());
        r = CliRun.run("streams", "put", "pattern", "-c", c, "--location", "testpattern:160x120@5?live=true",
                "--grid", "2", "--decoder", "cpu");
        assertEquals(0, r.code(), r.all());
        r = CliRun.run("streams", "put", "clip", "-c", c, "--location", "/data/clip.mp4", "--live", "false",
                "--prompts", "{\"objects\":[{\"id\":1,\"box\":[0,0,10,10]},{\"id\":2,\"points\":[[4,4]]}]}");
        assertEquals(0, r.code(), r.all());
        r = CliRun.run("streams", "put", "dock", "-c", c, "--location", "rtsp://10.0.0.7/live", "--concept", "person",
                "--concept", " red forklift ", "--concepts-every-frames", "5");
        assertEquals(0, r.code(), r.all());

        // Made as the engines of this cluster make it: compacted, cluster.partitions partitions.
        try (Admin admin = KafkaClients.plaintext(kafka.bootstrapServers()).admin("test", Map.of())) {
            TopicDescription d = admin.describeTopics(List.of("defs")).allTopicNames().get(30, TimeUnit.SECONDS)
                    .get("defs");
            assertEquals(4, d.partitions().size());
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, "defs");
            Config topicConfig = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
            assertEquals(TopicConfig.CLEANUP_POLICY_COMPACT, topicConfig.get(TopicConfig.CLEANUP_POLICY_CONFIG).value());
        }

        // The values are definitions the engine's parser reads as they were given.
        Map<String, String> defs = StreamDefinitions.read(KafkaClients.plaintext(kafka.bootstrapServers()), "defs",
                Duration.ofSeconds(30)).byId;
        StreamDefaults defaults = io.samstream.config.ConfigLoader.load().streamDefaults();
        StreamSpec cam = StreamSpecs.fromJson("cam-1", defs.get("cam-1"), defaults);
        assertEquals("rtsp://admin:s3cretPW@10.0.0.5:554/live", cam.location(), "the topic holds the real location");
        assertEquals(1, cam.prompts().objects().size());
        assertEquals(3, cam.prompts().objects().get(0).id());
        assertArrayEquals(new double[] {10, 20, 110, 220}, cam.prompts().objects().get(0).box());
        assertArrayEquals(new double[][] {{60, 120, 1}, {5, 5, 0}}, cam.prompts().objects().get(0).points());
        assertEquals(0, cam.prompts().grid(), "given prompts replace the defaults' grid");
        StreamSpec pattern = StreamSpecs.fromJson("pattern", defs.get("pattern"), defaults);
        assertEquals(2, pattern.prompts().grid());
        assertEquals(StreamSpec.Decoder.CPU, pattern.decoder());
        assertTrue(pattern.isLive());
        StreamSpec clip = StreamSpecs.fromJson("clip", defs.get("clip"), defaults);
        assertEquals(StreamSpec.Live.FALSE, clip.live());
        assertEquals(2, clip.prompts().objects().size());
        StreamSpec dock = StreamSpecs.fromJson("dock", defs.get("dock"), defaults);
        assertEquals(List.of("person", "red forklift"), dock.prompts().concepts());
        assertEquals(5, dock.prompts().conceptsEveryFrames());
        assertEquals(0, dock.prompts().objects().size());

        r = CliRun.run("streams", "list", "-c", c);
        assertEquals(0, r.code(), r.all());
        assertEquals("""
                ID       LIVE  DECODER  PROMPTS             LOCATION
                cam-1    live  auto     1 object            rtsp://admin:***@10.0.0.5:554/live
                clip     file  auto     2 objects           /data/clip.mp4
                dock     live  auto     2 concepts every 5  rtsp://10.0.0.7/live
                pattern  live  cpu      grid 2x2            testpattern:160x120@5?live=true
                """, r.out());
        assertFalse(r.all().contains("s3cretPW"), "the password is never shown");

        r = CliRun.run("streams", "delete", "clip", "-c", c);
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().startsWith("deleted clip from defs (a tombstone at partition "), r.all());
        r = CliRun.run("streams", "list", "-c", c);
        assertEquals(List.of("cam-1", "dock", "pattern"), r.out().lines().skip(1).map(l -> l.split(" ")[0]).toList(), r.all());

        // Redefining replaces: the latest value is the definition.
        r = CliRun.run("streams", "put", "pattern", "-c", c, "--location", "testpattern:320x240@5?live=true");
        assertEquals(0, r.code(), r.all());
        r = CliRun.run("streams", "list", "-c", c);
        assertTrue(r.out().contains("testpattern:320x240@5?live=true") && !r.out().contains("160x120"), r.all());
    }

    @Test
    void badInputIsOneLineNamingTheFieldAndWritesNothing() throws Exception {
        String c = config("bad").toString();
        assertEquals(0, CliRun.run("streams", "put", "ok", "-c", c, "--location", "/v.mp4").code());
        String[][] cases = {
            {"--live maybe", "stream definition 'x'.live: 'maybe' is not auto, true or false"},
            {"--decoder gpu", "stream definition 'x'.decoder: unknown decoder 'gpu' (expected auto, nvdec or cpu)"},
            {"--prompts {bad", "--prompts: not valid JSON: "},
            {"--prompts {\"objects\":[{\"id\":1,\"box\":[1,2]}]}",
                "stream definition 'x'.prompts.objects[0]: object 1: a box is [x0, y0, x1, y1] with x1 > x0, y1 > y0"},
            {"--prompts {\"objects\":[],\"gird\":2}", "stream definition 'x'.prompts: unknown key 'gird'"},
            {"--grid 40", "stream definition 'x'.prompts: grid must be 0 (none) to 32, got 40"},
            {"--point 1,x", "Invalid value for option '--point' (X,Y[,LABEL]): point '1,x' must be X,Y[,LABEL] with numbers"},
            {"--point 1,2,5", "point '1,2,5' has label 5 (1 = foreground, 0 = background)"},
            {"--box 1,2,3", "box '1,2,3' must be X0,Y0,X1,Y1"},
            {"--object 4", "--object 4 needs --point or --box"},
            {"--box 1,2,3,4 --prompts {}", "--prompts and --object/--point/--box/--grid/--concept both give prompts: use one"},
            {"--concept person --prompts {}", "--prompts and --object/--point/--box/--grid/--concept both give prompts"},
            {"--concepts-every-frames 3", "--concepts-every-frames 3 needs --concept"},
            {"--concept person --concepts-every-frames 0",
                "stream definition 'x'.prompts.concepts-every-frames: must be 1 to 10000"},
        };
        for (String[] bad : cases) {
            List<String> args = new ArrayList<>(List.of("streams", "put", "x", "-c", c, "--location", "/v.mp4"));
            args.addAll(List.of(bad[0].split(" ")));
            CliRun.Result r = CliRun.run(args.toArray(String[]::new));
            assertEquals(2, r.code(), bad[0] + ": " + r.all());
            assertTrue(r.err().lines().findFirst().orElseThrow().contains(bad[1]), bad[0] + ": " + r.all());
        }
        CliRun.Result r = CliRun.run("streams", "put", "two words", "-c", c, "--location", "/v.mp4");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().contains("stream id 'two words' must be 1-128 of A-Z a-z 0-9 . _ -"), r.all());
        r = CliRun.run("streams", "put", "y", "-c", c, "--location", " ");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().contains("location is empty"), r.all());

        r = CliRun.run("streams", "delete", "nope", "-c", c);
        assertEquals(1, r.code(), r.all());
        assertEquals("samstream: error: stream 'nope' is not defined on topic bad (defined: ok)\n", r.err());

        // Only the good definition is on the topic.
        List<String> keys = new ArrayList<>();
        TopicReads.readToEnd(KafkaClients.plaintext(kafka.bootstrapServers()), "bad", Duration.ofSeconds(30), rec -> {
            keys.add(rec.key());
            return true;
        });
        assertEquals(List.of("ok"), keys);
    }

    /** A definition the engine would skip (written by another tool) is listed with the engine's reason. */
    @Test
    void aDefinitionTheEngineSkipsIsListedWithItsReason() throws Exception {
        String c = config("mixed").toString();
        KafkaClients clients = KafkaClients.plaintext(kafka.bootstrapServers());
        Records.send(clients, "mixed", "good", "{\"location\":\"/a.mp4\"}", Duration.ofSeconds(30));
        Records.send(clients, "mixed", "broken", "{\"location\":\"/b.mp4\",\"colour\":\"red\"}", Duration.ofSeconds(30));
        Records.send(clients, "mixed", "gone", "{\"location\":\"/c.mp4\"}", Duration.ofSeconds(30));
        Records.send(clients, "mixed", "gone", null, Duration.ofSeconds(30));
        CliRun.Result r = CliRun.run("streams", "list", "-c", c);
        assertEquals(0, r.code(), r.all());
        List<String> lines = r.out().lines().toList();
        assertEquals(3, lines.size(), r.all());
        assertTrue(lines.get(1).startsWith("broken") && lines.get(1).contains("invalid, engines skip it: stream"
                + " definition 'broken': unknown key 'colour'"), r.all());
        assertTrue(lines.get(2).startsWith("good ") && lines.get(2).endsWith("/a.mp4"), r.all());
    }

    /** Without a streams topic in the configuration, --streams-topic names one; without either, an error says so. */
    @Test
    void theStreamsTopicComesFromTheOptionOrTheConfiguration() throws Exception {
        CliRun.Result r = CliRun.run("streams", "list", "--bootstrap", kafka.bootstrapServers());
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().startsWith("samstream: no streams topic: give --streams-topic or set samstream.streams-topic"
                + " in a file given with -c"), r.all());
        r = CliRun.run("streams", "put", "s1", "--bootstrap", kafka.bootstrapServers(), "--streams-topic", "by-option",
                "--location", "/x.mp4");
        assertEquals(0, r.code(), r.all());
        r = CliRun.run("streams", "list", "--bootstrap", kafka.bootstrapServers(), "--streams-topic", "by-option");
        assertTrue(r.out().contains("s1 "), r.all());
        r = CliRun.run("streams", "list", "--bootstrap", kafka.bootstrapServers(), "--streams-topic", "no spaces");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().contains("samstream.streams-topic"), r.all());
        try (Admin admin = KafkaClients.plaintext(kafka.bootstrapServers()).admin("test", Map.of())) {
            assertEquals(1, admin.describeTopics(List.of("by-option")).allTopicNames().get(30, TimeUnit.SECONDS)
                    .get("by-option").partitions().size(), "without a cluster: one partition, as a lone engine makes it");
        }
    }
}
