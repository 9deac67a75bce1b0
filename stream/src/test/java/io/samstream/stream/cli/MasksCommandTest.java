package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import io.samstream.connectors.kafka.MaskRecordSerializer;
import io.samstream.gpu.mask.CocoRle;
import io.samstream.testkit.connectors.KafkaBrokerExtension;
import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code samstream masks tail|export} on records of known masks: one exact line per record, the raw record with
 * --json, only new records from the end (and a topic waited for until it exists), PNGs whose pixels are the
 * masks, a COCO document with the records' RLE, and bad input refused naming the option.
 */
@Timeout(180)
class MasksCommandTest {
    private static final int W = 32;
    private static final int H = 24;
    @RegisterExtension
    static final KafkaBrokerExtension kafka = KafkaBrokerExtension.create();

    @TempDir
    Path dir;

    private Path config(String masksTopic) throws Exception {
        return Files.writeString(dir.resolve(masksTopic + ".conf"), "samstream.kafka { bootstrap-servers = \""
                + kafka.bootstrapServers() + "\", masks-topic = \"" + masksTopic + "\" }");
    }

    /** A row-major mask: the rectangle [x0, x1) x [y0, y1), plus the pixel (px, py). */
    static boolean[] mask(int x0, int y0, int x1, int y1, int px, int py) {
        boolean[] m = new boolean[W * H];
        for (int y = y0; y < y1; y++) {
            for (int x = x0; x < x1; x++) {
                m[y * W + x] = true;
            }
        }
        m[py * W + px] = true;
        return m;
    }

    static MaskRecord.ObjectMask object(int id, float score, boolean[] m) {
        CocoRle rle = CocoRle.ofMask(m, H, W);
        int[] box = rle.boundingBoxCorners();
        return new MaskRecord.ObjectMask(id, score, 0.9f, new MaskRecord.Box(box[0], box[1], box[2], box[3]),
                rle.area(), new MaskRecord.Rle(H, W, rle.countsString()));
    }

    static MaskRecord record(String stream, long frame, List<MaskRecord.ObjectMask> objects, List<Integer> hidden,
            List<Integer> lost) {
        return new MaskRecord(stream, frame, frame * 40, Instant.parse("2026-12-04T10:00:00Z").plusMillis(frame * 40),
                W, H, "test-model", objects, hidden, lost);
    }

    /** Sends records (with the engine header when {@code engine} is not null) and raw values. */
    static void send(String topic, String engine, List<MaskRecord> records) throws Exception {
        try (KafkaProducer<String, MaskRecord> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka.bootstrapServers()), new StringSerializer(), new MaskRecordSerializer())) {
            for (MaskRecord r : records) {
                ProducerRecord<String, MaskRecord> pr = new ProducerRecord<>(topic, r.stream(), r);
                if (engine != null) {
                    pr.headers().add(MaskRecord.ENGINE_HEADER, engine.getBytes(StandardCharsets.UTF_8));
                }
                p.send(pr).get(30, TimeUnit.SECONDS);
            }
        }
    }

    static void sendRaw(String topic, String key, String value) throws Exception {
        try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka.bootstrapServers()), new StringSerializer(), new ByteArraySerializer())) {
            p.send(new ProducerRecord<>(topic, key, value == null ? null : value.getBytes(StandardCharsets.UTF_8)))
                    .get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void tailPrintsOneLinePerRecordAndTheRecordWithJson() throws Exception {
        String c = config("tail1").toString();
        MaskRecord a0 = record("a", 0, List.of(object(1, 0.97f, mask(4, 3, 12, 9, 20, 20)),
                object(2, 0.5f, mask(14, 10, 16, 12, 0, 0))), List.of(3), List.of());
        MaskRecord a1 = record("a", 1, List.of(), List.of(), List.of(1, 2));
        send("tail1", "e1", List.of(a0));
        sendRaw("tail1", "a", "{\"not\":\"a mask record\"}");
        sendRaw("tail1", "a", null);
        send("tail1", null, List.of(record("b", 0, List.of(), List.of(), List.of())));
        send("tail1", "e2", List.of(a1, record("a", 2, List.of(), List.of(), List.of())));

        CliRun.Result r = CliRun.run("masks", "tail", "-c", c, "--from-beginning", "--stream", "a", "--max", "2");
        assertEquals(0, r.code(), r.all());
        assertEquals(List.of(
                "stream=a frame=0 pts_ms=0 engine=e1 size=32x24 objects=[1 score=0.970 area=49 box=4,3,21,21;"
                        + " 2 score=0.500 area=5 box=0,0,16,12] hidden=[3]",
                "stream=a frame=1 pts_ms=40 engine=e2 size=32x24 objects=[] lost=[1,2]"), r.out().lines().toList());
        assertTrue(r.err().contains("samstream: skipped the record at tail1-0@1: topic tail1: mask record has no field"
                + " 'objects'"), r.all());
        assertTrue(r.err().contains("samstream: masks tail: 2 record(s)"), r.all());

        r = CliRun.run("masks", "tail", "--bootstrap", kafka.bootstrapServers(), "-c", c, "--from-beginning", "--json",
                "--max", "2");
        assertEquals(0, r.code(), r.all());
        assertEquals(List.of(new String(MaskRecordJson.write(a0), StandardCharsets.UTF_8),
                "{\"stream\":\"b\",\"frame\":0,\"pts_ms\":0,\"captured_at\":\"2026-12-04T10:00:00Z\",\"width\":32,"
                        + "\"height\":24,\"model\":\"test-model\",\"objects\":[]}"), r.out().lines().toList());
    }

    /** From the end: only what comes after the start; a topic not there yet is waited for. */
    @Test
    void tailFromTheEndWaitsForTheTopicAndPrintsOnlyNewRecords() throws Exception {
        send("tail2", null, List.of(record("old", 0, List.of(), List.of(), List.of())));
        try (CliRun.Running tail = new CliRun.Running("masks", "tail", "-c", config("tail2").toString(), "--max", "1")) {
            tail.awaitOutput("samstream: following tail2 on " + kafka.bootstrapServers() + " from its end",
                    Duration.ofSeconds(60));
            send("tail2", null, List.of(record("new", 5, List.of(), List.of(), List.of())));
            assertEquals(0, tail.await(Duration.ofSeconds(60)), tail.err());
            assertEquals("stream=new frame=5 pts_ms=200 size=32x24 objects=[]\n", tail.out());
        }
        try (CliRun.Running tail = new CliRun.Running("masks", "tail", "-c", config("tail3").toString(), "--max", "1")) {
            tail.awaitOutput("samstream: topic tail3 does not exist yet: waiting for the first record",
                    Duration.ofSeconds(60));
            kafka.broker().createTopic("tail3", 2, false);
            tail.awaitOutput("samstream: following tail3", Duration.ofSeconds(60));
            send("tail3", "e3", List.of(record("late", 0, List.of(), List.of(), List.of())));
            assertEquals(0, tail.await(Duration.ofSeconds(60)), tail.err());
            assertEquals("stream=late frame=0 pts_ms=0 engine=e3 size=32x24 objects=[]\n", tail.out());
        }
    }

    @Test
    void exportWritesThePngsOfTheMasksTheLaterRecordOfAFrameWinning() throws Exception {
        String c = config("exp1").toString();
        boolean[] first = mask(4, 3, 12, 9, 20, 20);
        boolean[] second = mask(0, 0, 5, 5, 31, 23);
        boolean[] replaced = mask(10, 10, 30, 20, 1, 1);
        send("exp1", "e1", List.of(
                record("a", 0, List.of(object(1, 0.9f, first), object(2, 0.8f, second)), List.of(), List.of()),
                record("a", 1, List.of(object(1, 0.9f, second)), List.of(), List.of()),
                record("b", 0, List.of(object(9, 0.9f, first)), List.of(), List.of())));
        // Frame 1 again (a failover publishes it twice): the later record is the one exported, and the
        // count is the files written (3), not the records read (4).
        send("exp1", "e2", List.of(record("a", 1, List.of(object(1, 0.9f, replaced)), List.of(), List.of())));
        Path out = dir.resolve("pngs");
        CliRun.Result r = CliRun.run("masks", "export", "-c", c, "--stream", "a", "--to", out.toString());
        assertEquals(0, r.code(), r.all());
        assertEquals("wrote 3 masks of 2 frames of stream a to " + out + "\n", r.out());
        try (var files = Files.list(out)) {
            assertEquals(List.of("frame-000000-object-1.png", "frame-000000-object-2.png", "frame-000001-object-1.png"),
                    files.map(p -> p.getFileName().toString()).sorted().toList());
        }
        assertArrayEquals(first, pixels(out.resolve("frame-000000-object-1.png")));
        assertArrayEquals(second, pixels(out.resolve("frame-000000-object-2.png")));
        assertArrayEquals(replaced, pixels(out.resolve("frame-000001-object-1.png")));
    }

    @Test
    void exportWritesOneCocoDocumentWithTheRecordsRle() throws Exception {
        String c = config("exp2").toString();
        MaskRecord f0 = record("a", 0, List.of(object(1, 0.9f, mask(4, 3, 12, 9, 20, 20)),
                object(2, 0.8f, mask(0, 0, 5, 5, 31, 23))), List.of(), List.of());
        send("exp2", null, List.of(f0, record("a", 1, List.of(object(1, 0.9f, mask(1, 1, 2, 2, 3, 3))), List.of(),
                List.of())));
        Path out = dir.resolve("coco");
        CliRun.Result r = CliRun.run("masks", "export", "-c", c, "--stream", "a", "--to", out.toString(), "--format",
                "coco", "--max-frames", "1");
        assertEquals(0, r.code(), r.all());
        assertEquals("wrote " + out.resolve("coco.json") + ": 1 frames, 2 masks of stream a\n", r.out());
        JsonNode coco = new ObjectMapper().readTree(out.resolve("coco.json").toFile());
        assertEquals(1, coco.get("images").size());
        JsonNode image = coco.get("images").get(0);
        assertEquals(0, image.get("id").asLong());
        assertEquals(W, image.get("width").asInt());
        assertEquals(H, image.get("height").asInt());
        assertEquals(2, coco.get("annotations").size());
        for (int i = 0; i < 2; i++) {
            JsonNode a = coco.get("annotations").get(i);
            MaskRecord.ObjectMask o = f0.objects().get(i);
            assertEquals(o.id(), a.get("track_id").asInt());
            assertEquals(0, a.get("image_id").asLong());
            assertEquals(1, a.get("category_id").asInt());
            assertEquals(o.mask().counts(), a.get("segmentation").get("counts").asText());
            assertEquals("[" + H + "," + W + "]", a.get("segmentation").get("size").toString());
            assertEquals(o.area(), a.get("area").asLong());
            assertEquals("[" + o.box().x0() + "," + o.box().y0() + "," + (o.box().x1() - o.box().x0()) + ","
                    + (o.box().y1() - o.box().y0()) + "]", a.get("bbox").toString());
        }
        assertEquals("object", coco.get("categories").get(0).get("name").asText());
    }

    @Test
    void badInputIsRefusedNamingTheOption() throws Exception {
        String c = config("exp3").toString();
        send("exp3", null, List.of(record("a", 0, List.of(), List.of(), List.of()),
                record("b", 0, List.of(), List.of(), List.of())));
        CliRun.Result r = CliRun.run("masks", "export", "-c", c, "--stream", "zzz", "--to", dir.resolve("z").toString());
        assertEquals(1, r.code(), r.all());
        assertEquals("samstream: error: no mask records of stream 'zzz' on topic exp3 (streams there: a, b)\n", r.err());
        r = CliRun.run("masks", "export", "-c", c, "--stream", "a", "--to", dir.resolve("g").toString(), "--format", "gif");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().startsWith("samstream: --format must be png or coco, got 'gif'"), r.all());
        r = CliRun.run("masks", "export", "-c", c, "--stream", "a", "--to", dir.resolve("g").toString(),
                "--max-frames", "0");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().startsWith("samstream: --max-frames must be at least 1, got 0"), r.all());
        Path file = Files.writeString(dir.resolve("a-file"), "x");
        r = CliRun.run("masks", "export", "-c", c, "--stream", "a", "--to", file.toString());
        assertEquals(1, r.code(), r.all());
        assertTrue(r.err().startsWith("samstream: error: --to " + file + ": cannot create the folder"), r.all());
        r = CliRun.run("masks", "export", "-c", config("missing").toString(), "--stream", "a", "--to",
                dir.resolve("m").toString());
        assertEquals(1, r.code(), r.all());
        assertTrue(r.err().contains("on topic missing (it does not exist)"), r.all());
        r = CliRun.run("masks", "tail", "-c", c, "--max", "0");
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().startsWith("samstream: --max must be at least 1, got 0"), r.all());
    }

    /** A PNG's pixels as a row-major mask (255 in, 0 out; nothing else). */
    static boolean[] pixels(Path png) throws Exception {
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(W, image.getWidth());
        assertEquals(H, image.getHeight());
        boolean[] m = new boolean[W * H];
        for (int y = 0; y < H; y++) {
            for (int x = 0; x < W; x++) {
                int grey = image.getRaster().getSample(x, y, 0);
                assertTrue(grey == 0 || grey == 255, "pixel " + x + "," + y + " is " + grey);
                m[y * W + x] = grey == 255;
            }
        }
        return m;
    }
}
