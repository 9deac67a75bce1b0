package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.samstream.config.ConfigException;
import io.samstream.config.ConfigLoader;
import io.samstream.config.StreamSpecs;
import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import io.samstream.stream.engine.PromptMessage;
import io.samstream.stream.engine.PromptRejected;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JSON Schemas of docs/schema against what samstream really writes: the mask records the engine published
 * to its embedded broker and wrote to masks.jsonl ({@code samstream demo}), the prompt messages and stream
 * definitions the commands write; and what they must refuse: a record missing each required field or with a
 * field of the wrong shape, prompt messages and definitions the engine rejects for their shape.
 */
@Timeout(300)
class RecordSchemasTest {
    static final Path SCHEMAS = Path.of("../docs/schema").toAbsolutePath().normalize();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;
    /** The values the demo's engine published to Kafka, and the lines of its masks.jsonl. */
    private static final List<String> published = new ArrayList<>();
    private static final List<String> jsonl = new ArrayList<>();
    private static final List<String> schemaHeaders = new ArrayList<>();

    @BeforeAll
    static void runTheEngine() throws Exception {
        // The bundled model: its masks are real (the tiny test model's random weights find none).
        Path conf = Files.writeString(dir.resolve("demo.conf"), "samstream { device = cpu, cpu.threads = 2 }");
        Path out = dir.resolve("demo");
        CliRun.Result r = CliRun.run("demo", "-c", conf.toString(), "--out", out.toString(), "--frames", "3");
        assertEquals(0, r.code(), r.all());
        jsonl.addAll(Files.readAllLines(out.resolve("masks.jsonl")));
        // The demo's broker kept its data: a broker on that folder has the records it published.
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().logDir(out.resolve("kafka-data")).start()) {
            TopicReads.readToEnd(KafkaClients.plaintext(broker.bootstrapServers()), "samstream.masks",
                    Duration.ofSeconds(60), rec -> {
                        published.add(new String(rec.value(), StandardCharsets.UTF_8));
                        schemaHeaders.add(new String(rec.headers().lastHeader(MaskRecord.SCHEMA_HEADER).value(),
                                StandardCharsets.UTF_8));
                        return true;
                    });
        }
        assertEquals(3, published.size());
        assertEquals(3, jsonl.size());
    }

    static Schema schema(String file) throws Exception {
        try (InputStream in = Files.newInputStream(SCHEMAS.resolve(file))) {
            return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(in);
        }
    }

    private static List<String> errors(Schema schema, String json) throws Exception {
        return schema.validate(JSON.readTree(json)).stream().map(Error::toString).toList();
    }

    @Test
    void theEnginesRecordsFitTheMaskRecordSchema() throws Exception {
        Schema schema = schema("mask-record.schema.json");
        int objects = 0;
        for (String value : published) {
            assertEquals(List.of(), errors(schema, value), value);
            objects += JSON.readTree(value).get("objects").size();
        }
        assertTrue(objects > 0, "the demo's records hold masks: " + published);
        assertEquals(List.of(MaskRecord.SCHEMA_VERSION), schemaHeaders.stream().distinct().toList(),
                "the schema's version is the one the records carry");
        assertTrue(schema.getSchemaNode().get("$id").asText().endsWith(":" + MaskRecord.SCHEMA_VERSION));
        for (String line : jsonl) {
            assertEquals(List.of(), errors(schema, line), line);
        }
        // The optional fields, as the engine's writer writes them.
        MaskRecord withLists = MaskRecordJson.read(published.get(0).getBytes(StandardCharsets.UTF_8));
        String both = new String(MaskRecordJson.write(new MaskRecord(withLists.stream(), 7, 280, Instant.now(),
                withLists.width(), withLists.height(), withLists.model(), withLists.objects(), List.of(4), List.of(9, 12))),
                StandardCharsets.UTF_8);
        assertEquals(List.of(), errors(schema, both), both);
    }

    @Test
    void aRecordMissingARequiredFieldOrMisshapenFailsTheSchema() throws Exception {
        Schema schema = schema("mask-record.schema.json");
        ObjectNode real = (ObjectNode) JSON.readTree(published.stream().filter(v -> v.contains("\"counts\""))
                .findFirst().orElseThrow());
        for (String field : List.of("stream", "frame", "pts_ms", "captured_at", "width", "height", "model", "objects")) {
            ObjectNode broken = real.deepCopy();
            broken.remove(field);
            List<String> errors = errors(schema, broken.toString());
            assertFalse(errors.isEmpty(), "without " + field);
            assertTrue(errors.toString().contains(field), field + ": " + errors);
        }
        for (String field : List.of("id", "score", "stability", "box", "area", "mask")) {
            ObjectNode broken = real.deepCopy();
            ((ObjectNode) broken.get("objects").get(0)).remove(field);
            List<String> errors = errors(schema, broken.toString());
            assertTrue(errors.toString().contains(field), "objects[0] without " + field + ": " + errors);
        }
        for (String field : List.of("size", "counts")) {
            ObjectNode broken = real.deepCopy();
            ((ObjectNode) broken.get("objects").get(0).get("mask")).remove(field);
            assertTrue(errors(schema, broken.toString()).toString().contains(field), "mask without " + field);
        }
        String[][] misshapen = {
            {"frame", "\"7\""}, {"frame", "-1"}, {"width", "0"}, {"stream", "\"two words\""}, {"objects", "{}"},
            {"hidden", "[\"x\"]"}, {"lost", "3"},
        };
        for (String[] m : misshapen) {
            ObjectNode broken = real.deepCopy();
            broken.set(m[0], JSON.readTree(m[1]));
            assertFalse(errors(schema, broken.toString()).isEmpty(), m[0] + " = " + m[1]);
        }
        ObjectNode badCounts = real.deepCopy();
        ((ObjectNode) badCounts.get("objects").get(0).get("mask")).put("counts", "0 1");
        assertFalse(errors(schema, badCounts.toString()).isEmpty(), "counts outside '0'..'o'");
        ObjectNode badBox = real.deepCopy();
        ((ObjectNode) badBox.get("objects").get(0)).set("box", JSON.readTree("[1,2,3]"));
        assertFalse(errors(schema, badBox.toString()).isEmpty(), "a box of three numbers");
        // What the records' reader accepts, the schema accepts: an unknown field is ignored by both.
        ObjectNode extra = real.deepCopy();
        extra.put("added_later", 1);
        assertEquals(List.of(), errors(schema, extra.toString()));
        MaskRecordJson.read(extra.toString().getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void promptMessagesTheEngineTakesFitAndShapesItRejectsFail() throws Exception {
        Schema schema = schema("prompt-message.schema.json");
        List<String> good = List.of(
                "{\"stream\":\"cam-1\",\"op\":\"add\",\"object\":7,\"points\":[[40,30,1],[5.5,6,0]],\"box\":[10,10,80,70],"
                        + "\"frame\":12}",
                "{\"stream\":\"cam-1\",\"op\":\"add\",\"object\":3,\"points\":[[7,8]]}",
                "{\"stream\":\"s\",\"op\":\"update\",\"object\":0,\"box\":[0,0,1,1]}",
                "{\"stream\":\"s\",\"op\":\"remove\",\"object\":1000002}",
                "{\"stream\":\"s\",\"op\":\"reset\"}",
                "{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"red forklift\"}",
                "{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"pallet\",\"boxes\":[[1,2,30,40],[5,5,9,9,0]],"
                        + "\"frame\":4}",
                "{\"stream\":\"s\",\"op\":\"remove-concept\",\"text\":\"pallet\"}");
        for (String g : good) {
            PromptMessage m = PromptMessage.parse(null, g);
            assertEquals(List.of(), errors(schema, g), g);
            assertEquals(List.of(), errors(schema, m.toJson()), "as the commands write it: " + m.toJson());
        }
        List<String> bad = List.of(
                "{\"stream\":\"s\",\"op\":\"move\",\"object\":1,\"box\":[0,0,1,1]}",
                "{\"op\":\"reset\"}",
                "{\"stream\":\"s\",\"op\":\"add\",\"points\":[[1,1]]}",
                "{\"stream\":\"s\",\"op\":\"add\",\"object\":1}",
                "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[]}",
                "{\"stream\":\"s\",\"op\":\"add\",\"object\":1000000,\"points\":[[1,1]]}",
                "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[[1,1,2]]}",
                "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"points\":[[-1,1]]}",
                "{\"stream\":\"s\",\"op\":\"add\",\"object\":1,\"box\":[0,0,1]}",
                "{\"stream\":\"s\",\"op\":\"remove\"}",
                "{\"stream\":\"s\",\"op\":\"reset\",\"frame\":-3}",
                "{\"stream\":\"s\",\"op\":\"concept\"}",
                "{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"  \"}",
                "{\"stream\":\"s\",\"op\":\"remove-concept\",\"text\":7}",
                "{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"a\",\"boxes\":[[1,2,3]]}",
                "{\"stream\":\"s\",\"op\":\"concept\",\"text\":\"a\",\"boxes\":[[1,2,3,4,2]]}");
        for (String b : bad) {
            assertFalse(errors(schema, b).isEmpty(), b);
            try {
                PromptMessage.parse(null, b);
                throw new AssertionError("the engine took " + b);
            } catch (PromptRejected expected) {
                // the engine rejects it too
            }
        }
    }

    @Test
    void streamDefinitionsTheEngineTakesFitAndOnesItRejectsFail() throws Exception {
        Schema schema = schema("stream-definition.schema.json");
        var defaults = ConfigLoader.load().streamDefaults();
        List<String> good = List.of(
                "{\"location\":\"rtsp://cam/live\"}",
                "{\"location\":\"testpattern:160x120@5?live=true\",\"live\":\"true\",\"decoder\":\"cpu\","
                        + "\"prompts\":{\"grid\":2}}",
                "{\"id\":\"k\",\"location\":\"/v.mp4\",\"live\":false,\"prompts\":{\"objects\":[{\"id\":3,"
                        + "\"points\":[[60,120,1],[5,5,0]],\"box\":[10,20,110,220]}]}}",
                "{\"location\":\"/v.mp4\",\"prompts\":{\"concepts\":[\"person\"],\"concepts-every-frames\":5}}");
        for (String g : good) {
            StreamSpecs.fromJson("k", g, defaults);
            assertEquals(List.of(), errors(schema, g), g);
        }
        List<String> bad = List.of(
                "{\"live\":true}",
                "{\"location\":\" \"}",
                "{\"location\":\"/v.mp4\",\"colour\":\"red\"}",
                "{\"location\":\"/v.mp4\",\"live\":\"maybe\"}",
                "{\"location\":\"/v.mp4\",\"decoder\":\"gpu\"}",
                "{\"location\":\"/v.mp4\",\"prompts\":{\"grid\":40}}",
                "{\"location\":\"/v.mp4\",\"prompts\":{\"gird\":2}}",
                "{\"location\":\"/v.mp4\",\"prompts\":{\"objects\":[{\"id\":1}]}}",
                "{\"location\":\"/v.mp4\",\"prompts\":{\"objects\":[{\"id\":1,\"box\":[1,2]}]}}",
                "{\"location\":\"/v.mp4\",\"prompts\":{\"concepts\":[\"person\"],\"concepts-every-frames\":0}}",
                "{\"location\":\"/v.mp4\",\"prompts\":{\"concepts-every-frames\":10001}}",
                "{\"location\":\"/v.mp4\",\"prompts\":{\"concepts-every-frames\":\"often\"}}");
        for (String b : bad) {
            assertFalse(errors(schema, b).isEmpty(), b);
            try {
                StreamSpecs.fromJson("k", b, defaults);
                throw new AssertionError("the engine took " + b);
            } catch (ConfigException expected) {
                // the engine rejects it too
            }
        }
        JsonNode id = schema.getSchemaNode().get("properties").get("id");
        assertEquals(io.samstream.config.StreamSpec.ID.pattern(), id.get("pattern").asText().replaceAll("^\\^|\\$$", ""),
                "the schema's id pattern is the engine's");
    }
}
