package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.connectors.kafka.EmbeddedKafkaBroker;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import io.samstream.gpu.mask.CocoRle;
import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The clients of examples/clients: the record of examples/clients/testdata decodes to the expected pixels the
 * Python client's --check compares with (so both decoders answer to the same pixels), fits the schema; the Java
 * client, run by Java's source launcher as its README says, writes the PNG of a mask it read from a broker; the
 * Python client byte-compiles. (Its Kafka and pycocotools code needs packages the build cannot install.)
 */
@Timeout(180)
class ClientsTest {
    static final Path CLIENTS = Path.of("../examples/clients").toAbsolutePath().normalize();
    static final Path RECORD = CLIENTS.resolve("testdata/mask-record.json");

    @TempDir
    Path dir;

    /** {@code object-N.txt}: rows of '#' (set) and '.', as a row-major mask. */
    static boolean[] expected(int object, int width, int height) throws Exception {
        List<String> rows = Files.readAllLines(CLIENTS.resolve("testdata/object-" + object + ".txt"));
        assertEquals(height, rows.size());
        boolean[] m = new boolean[width * height];
        for (int y = 0; y < height; y++) {
            assertEquals(width, rows.get(y).length());
            for (int x = 0; x < width; x++) {
                m[y * width + x] = rows.get(y).charAt(x) == '#';
            }
        }
        return m;
    }

    @Test
    void theTestRecordDecodesToTheExpectedPixelsAndBack() throws Exception {
        MaskRecord record = MaskRecordJson.read(Files.readAllBytes(RECORD));
        assertEquals(List.of(1, 2), record.objects().stream().map(MaskRecord.ObjectMask::id).toList());
        for (MaskRecord.ObjectMask o : record.objects()) {
            boolean[] pixels = expected(o.id(), record.width(), record.height());
            assertArrayEquals(pixels, CocoRle.decode(o.mask().counts(), o.mask().height(), o.mask().width()),
                    "object " + o.id() + " decoded");
            CocoRle encoded = CocoRle.ofMask(pixels, record.height(), record.width());
            assertEquals(o.mask().counts(), encoded.countsString(), "object " + o.id() + " encoded");
            assertEquals(o.area(), encoded.area());
            int[] box = encoded.boundingBoxCorners();
            assertEquals(new MaskRecord.Box(box[0], box[1], box[2], box[3]), o.box());
        }
        assertEquals(List.of(), RecordSchemasTest.schema("mask-record.schema.json")
                .validate(new ObjectMapper().readTree(RECORD.toFile())));
    }

    @Test
    void theJavaClientWritesTheMaskItReadAsAPng() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start();
             KafkaProducer<String, byte[]> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                     broker.bootstrapServers()), new StringSerializer(), new ByteArraySerializer())) {
            broker.createTopic("client-masks", 2, false);
            ProducerRecord<String, byte[]> r = new ProducerRecord<>("client-masks", "cam-1",
                    Files.readString(RECORD).trim().getBytes(StandardCharsets.UTF_8));
            r.headers().add(MaskRecord.SCHEMA_HEADER, MaskRecord.SCHEMA_VERSION.getBytes(StandardCharsets.UTF_8));
            p.send(r).get(30, TimeUnit.SECONDS);

            Path png = dir.resolve("object-2.png");
            Path log = dir.resolve("client.log");
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process client = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                    CLIENTS.resolve("java/MaskConsumer.java").toString(), "--bootstrap", broker.bootstrapServers(),
                    "--topic", "client-masks", "--stream", "cam-1", "--object", "2", "--out", png.toString(),
                    "--from-beginning", "--timeout", "60")
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            assertTrue(client.waitFor(150, TimeUnit.SECONDS), "the client did not end");
            String output = Files.readString(log);
            assertEquals(0, client.exitValue(), output);
            assertTrue(output.contains("cam-1 frame 42: 2 objects [1 (area 235), 2 (area 96)]"), output);
            assertTrue(output.contains("wrote " + png + ": object 2 of frame 42"), output);
            BufferedImage image = ImageIO.read(new File(png.toString()));
            boolean[] got = new boolean[40 * 30];
            for (int y = 0; y < 30; y++) {
                for (int x = 0; x < 40; x++) {
                    got[y * 40 + x] = image.getRaster().getSample(x, y, 0) == 255;
                }
            }
            assertArrayEquals(expected(2, 40, 30), got);
        }
    }

    @Test
    void thePythonClientByteCompiles() throws Exception {
        Process which = new ProcessBuilder("sh", "-c", "command -v python3").start();
        Assumptions.assumeTrue(which.waitFor() == 0, "no python3 on the path: consume_masks.py not compiled");
        Path log = dir.resolve("py.log");
        Process py = new ProcessBuilder("python3", "-c", "import py_compile, sys; py_compile.compile(sys.argv[1],"
                + " cfile=sys.argv[2], doraise=True)", CLIENTS.resolve("python/consume_masks.py").toString(),
                dir.resolve("consume_masks.pyc").toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertTrue(py.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, py.exitValue(), Files.readString(log));
    }
}
