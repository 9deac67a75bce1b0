package io.samstream.gpu.sam2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.checkpoint.StateDict;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Finding 8 of issue #31: layout files ({@code <checkpoint>.layout.json}) whose values crashed or misled the model
 * ({@code image_size: 4096} an OutOfMemoryError, {@code heads: 1000000000} "-424509440", {@code heads: 3} "GEMM
 * operands too small", {@code image_size: 65536} "Index 0 out of bounds", {@code global_att_blocks: [1000]} and
 * trailing garbage accepted, a {@code "name"} with a newline forging log lines) are each refused before anything is
 * allocated, naming the key, the value and the bound. The tiny fixture: Hiera width 8, stages [1, 2, 2, 1], hidden 64.
 */
class Sam2LayoutsTest {
    static final Path TINY = Path.of("src/test/resources/fixtures/sam2/tiny/checkpoint.pt");
    static final String GOOD = "{\"name\": \"tiny\", \"heads\": 1, \"global_att_blocks\": [2], \"window_spec\": [8, 4, 6, 2],"
            + " \"image_size\": 128, \"mem_attn_heads\": 2}";
    static StateDict sd;

    @TempDir
    static Path dir;

    @BeforeAll
    static void load() throws Exception {
        Path copy = dir.resolve("small.pt");
        Files.copy(TINY, copy);
        sd = CheckpointLoader.load(copy);
    }

    /** The error of the tiny checkpoint opened with {@code layout} as its layout file. */
    private static String refused(String layout) throws Exception {
        Files.writeString(ModelCheckpoints.layoutFile(sd.source()), layout);
        return assertThrows(CheckpointException.class, () -> ModelCheckpoints.sam2Config(sd)).getMessage();
    }

    private static String with(String key, String value) {
        return GOOD.replaceFirst("\"" + key + "\": (\\[[^]]*]|\"[^\"]*\"|\\d+)", java.util.regex.Matcher.quoteReplacement("\"" + key + "\": " + value));
    }

    @Test
    void theGoodLayoutOpens() throws Exception {
        Files.writeString(ModelCheckpoints.layoutFile(sd.source()), GOOD);
        Sam2Config c = ModelCheckpoints.sam2Config(sd);
        assertEquals(128, c.imageSize());
        assertEquals("tiny", c.layout().name());
    }

    @Test
    void imageSizesBeyondTheReleasesAreRefusedBeforeAnyAllocation() throws Exception {
        String layout = dir.resolve("small.pt.layout.json").toString();
        assertEquals(layout + ": \"image_size\" is 4096, at most 1024", refused(with("image_size", "4096")));
        assertEquals(layout + ": \"image_size\" is 65536, at most 1024", refused(with("image_size", "65536")));
        assertEquals(layout + ": \"image_size\" is 16, at least 32", refused(with("image_size", "16")));
        assertEquals(layout + ": \"image_size\" is 112, not a multiple of 32 (Hiera's stride at its last stage)",
                refused(with("image_size", "112")));
        assertEquals(layout + ": \"image_size\" is 99999999999, at most 1024", refused(with("image_size", "99999999999")));
    }

    @Test
    void headsMustDivideTheWidth() throws Exception {
        String pt = sd.source().toString();
        assertEquals(dir.resolve("small.pt.layout.json") + ": \"heads\" is 1000000000, at most 4096",
                refused(with("heads", "1000000000")));
        assertEquals(pt + ": layout small.pt.layout.json: \"heads\" is 3, it must divide Hiera's width 8"
                + " (image_encoder.trunk.patch_embed.proj.weight)", refused(with("heads", "3")));
        assertEquals(pt + ": layout small.pt.layout.json: \"heads\" is 16, it must divide Hiera's width 8"
                + " (image_encoder.trunk.patch_embed.proj.weight)", refused(with("heads", "16")));
        assertEquals(pt + ": layout small.pt.layout.json: \"mem_attn_heads\" is 32, it must divide the hidden width 64"
                + " (no_mem_embed) into heads of a multiple of 4 channels (RoPE)", refused(with("mem_attn_heads", "32")));
    }

    @Test
    void blockIndicesAndWindowsMustFitTheTrunk() throws Exception {
        String pt = sd.source().toString();
        assertEquals(pt + ": layout small.pt.layout.json: \"global_att_blocks\" has block 1000, the trunk's blocks are"
                + " 0 to 5 (stages [1, 2, 2, 1])", refused(with("global_att_blocks", "[1000]")));
        assertEquals(pt + ": layout small.pt.layout.json: \"global_att_blocks\" lists block 2 twice",
                refused(with("global_att_blocks", "[2, 2]")));
        assertTrue(refused(with("global_att_blocks", "[-1]")).endsWith("\"global_att_blocks\"[0] is -1, it must be a"
                + " whole number from 0 to 1023"));
        assertEquals(pt + ": layout small.pt.layout.json: \"window_spec\"[2] is 9, larger than stage 3's map of 8"
                + " (image_size 128)", refused(with("window_spec", "[8, 4, 9, 2]")));
        assertEquals(pt + ": layout small.pt.layout.json: \"window_spec\"[0] is 7, it must divide the first stage's map"
                + " of 32 (image_size 128 / 4)", refused(with("window_spec", "[7, 4, 6, 2]")));
        assertTrue(refused(with("window_spec", "[8, 4, 6]")).endsWith("\"window_spec\" has 3 sizes, Hiera's 4 stages"
                + " need exactly 4"));
    }

    @Test
    void exactlyOneJsonObjectIsRead() throws Exception {
        String layout = dir.resolve("small.pt.layout.json").toString();
        assertTrue(refused(GOOD + " trailing garbage").startsWith(layout + ": is not one JSON value: "));
        assertTrue(refused(GOOD + " {}").startsWith(layout + ": is not one JSON value: "));
        assertTrue(refused(GOOD.replace("\"heads\": 1,", "\"heads\": 1, \"heads\": 2,"))
                .startsWith(layout + ": is not one JSON value: Duplicate field 'heads'"));
        assertEquals(layout + ": a SAM 2 layout is a JSON object, got nothing", refused(""));
        assertEquals(layout + ": a SAM 2 layout is a JSON object, got array", refused("[1]"));
        assertEquals(layout + ": \"heads\" must be a whole number from 1 to 4096, got 1.5", refused(with("heads", "1.5")));
    }

    /** A name with a newline (finding 7) is escaped and cut once, where it is read: the log line stays one line. */
    @Test
    void theNameCannotForgeALogLine() throws Exception {
        ListAppender<ILoggingEvent> captured = new ListAppender<>();
        Logger log = (Logger) LoggerFactory.getLogger(ModelCheckpoints.class);
        captured.start();
        log.addAppender(captured);
        ch.qos.logback.classic.Level level = log.getLevel();
        log.setLevel(ch.qos.logback.classic.Level.INFO);
        try {
            Files.writeString(ModelCheckpoints.layoutFile(sd.source()),
                    with("name", "\"x\\n12:00:00.000 ERROR ClusterMember - FORGED" + "y".repeat(500) + "\""));
            Sam2Config c = ModelCheckpoints.sam2Config(sd);
            assertTrue(c.layout().name().startsWith("x\\n12:00:00.000 ERROR"), c.layout().name());
            assertTrue(c.layout().name().matches(".*yyy\\.\\.\\. \\(543 chars\\)"), c.layout().name());
        } finally {
            log.detachAppender(captured);
            log.setLevel(level);
        }
        assertFalse(captured.list.isEmpty());
        for (ILoggingEvent e : captured.list) {
            assertFalse(e.getFormattedMessage().contains("\n"), e.getFormattedMessage());
        }
    }

    @Test
    void everyReleaseLayoutPassesTheChecks() {
        for (Sam2ConfigInference.Released r : Sam2ConfigInference.RELEASES) {
            Sam2Layouts.check(r.layout(), r.embedDim(), r.stages(), 256, Path.of("release.pt"), null);
        }
    }
}
