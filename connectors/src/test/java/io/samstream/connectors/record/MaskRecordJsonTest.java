package io.samstream.connectors.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link MaskRecordJson}: the masks topic's JSON, field for field, and the records' own checks. */
public class MaskRecordJsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static MaskRecord sample() {
        return new MaskRecord("cam-1", 42, 1400, Instant.parse("2026-01-02T03:04:05.678Z"), 1280, 720, "sam_vit_b",
                List.of(new MaskRecord.ObjectMask(7, 0.97f, 0.95f, new MaskRecord.Box(10, 20, 110, 220), 15000,
                        new MaskRecord.Rle(720, 1280, "a1b2\\\"c3"))));
    }

    @Test
    void writesTheDesignLayoutExactly() throws Exception {
        byte[] bytes = MaskRecordJson.write(sample());
        String text = new String(bytes, StandardCharsets.UTF_8);
        assertEquals("{\"stream\":\"cam-1\",\"frame\":42,\"pts_ms\":1400,\"captured_at\":\"2026-01-02T03:04:05.678Z\","
                + "\"width\":1280,\"height\":720,\"model\":\"sam_vit_b\",\"objects\":[{\"id\":7,\"score\":0.97,"
                + "\"stability\":0.95,\"box\":[10,20,110,220],\"area\":15000,"
                + "\"mask\":{\"size\":[720,1280],\"counts\":\"a1b2\\\\\\\"c3\"}}]}", text);
        // And it is what a JSON library reads back (the RLE's backslash and quote escaped).
        JsonNode root = JSON.readTree(bytes);
        assertEquals("a1b2\\\"c3", root.at("/objects/0/mask/counts").textValue());
    }

    @Test
    void roundTrips() {
        MaskRecord record = sample();
        assertEquals(record, MaskRecordJson.read(MaskRecordJson.write(record)));
        MaskRecord empty = new MaskRecord("s", 0, 0, Instant.ofEpochSecond(1, 5), 2, 1, "m", List.of());
        assertEquals(empty, MaskRecordJson.read(MaskRecordJson.write(empty)));
        assertTrue(new String(MaskRecordJson.write(empty), StandardCharsets.UTF_8)
                .contains("\"captured_at\":\"1970-01-01T00:00:01.000000005Z\""));
    }

    @Test
    void lostIdsAreWrittenOnlyWhenThereAreSome() throws Exception {
        MaskRecord none = sample();
        assertTrue(!new String(MaskRecordJson.write(none), StandardCharsets.UTF_8).contains("lost"));
        MaskRecord r = new MaskRecord("cam-1", 42, 1400, none.capturedAt(), 1280, 720, "sam_vit_b", none.objects(),
                List.of(3, 1000001));
        byte[] bytes = MaskRecordJson.write(r);
        assertEquals("[3,1000001]", JSON.readTree(bytes).get("lost").toString());
        assertEquals(r, MaskRecordJson.read(bytes));
        assertEquals(List.of(), MaskRecordJson.read(MaskRecordJson.write(none)).lost());
        String bad = new String(bytes, StandardCharsets.UTF_8).replace("[3,1000001]", "[\"x\"]");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MaskRecordJson.read(bad.getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains("'lost'"), e.getMessage());
    }

    @Test
    void hiddenIdsAreWrittenOnlyWhenThereAreSomeAndAVersion1RecordReadsWithNone() throws Exception {
        MaskRecord none = sample();
        assertTrue(!new String(MaskRecordJson.write(none), StandardCharsets.UTF_8).contains("hidden"));
        MaskRecord r = new MaskRecord("cam-1", 42, 1400, none.capturedAt(), 1280, 720, "sam_vit_b", none.objects(),
                List.of(2, 1000003), List.of(3));
        byte[] bytes = MaskRecordJson.write(r);
        String text = new String(bytes, StandardCharsets.UTF_8);
        assertTrue(text.endsWith(",\"hidden\":[2,1000003],\"lost\":[3]}"), text);
        assertEquals(r, MaskRecordJson.read(bytes));
        // A version 1 record (no 'hidden' field) reads with none.
        assertEquals(List.of(), MaskRecordJson.read(MaskRecordJson.write(none)).hidden());
        assertEquals(List.of(3), MaskRecordJson.read(text.replace("\"hidden\":[2,1000003],", "")
                .getBytes(StandardCharsets.UTF_8)).lost());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MaskRecordJson.read(text.replace("[2,1000003]", "7").getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains("'hidden'"), e.getMessage());
    }

    @Test
    void theConceptIsWrittenOnlyForObjectsAConceptFound() throws Exception {
        MaskRecord.ObjectMask plain = sample().objects().get(0);
        assertTrue(!new String(MaskRecordJson.write(sample()), StandardCharsets.UTF_8).contains("concept"));
        MaskRecord.ObjectMask found = new MaskRecord.ObjectMask(1000004, 0.8f, 1f, plain.box(), plain.area(),
                plain.mask(), "red forklift");
        MaskRecord r = new MaskRecord("cam-1", 42, 1400, sample().capturedAt(), 1280, 720, "sam3", List.of(plain,
                found));
        byte[] bytes = MaskRecordJson.write(r);
        JsonNode objects = JSON.readTree(bytes).get("objects");
        assertTrue(!objects.get(0).has("concept"), objects.toString());
        assertEquals("red forklift", objects.get(1).get("concept").textValue());
        assertEquals(r, MaskRecordJson.read(bytes));
        assertEquals(null, MaskRecordJson.read(MaskRecordJson.write(sample())).objects().get(0).concept());
        // A reader that knows no concepts (one that reads fields by name, as ours did) skips the field.
        String later = new String(bytes, StandardCharsets.UTF_8).replace("\"concept\"", "\"later\"");
        assertEquals(null, MaskRecordJson.read(later.getBytes(StandardCharsets.UTF_8)).objects().get(1).concept());
        String wrong = new String(bytes, StandardCharsets.UTF_8).replace("\"red forklift\"", "3");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MaskRecordJson.read(wrong.getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains("objects[1].concept"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new MaskRecord.ObjectMask(1, 0, 0, plain.box(), 0,
                plain.mask(), ""));
    }

    @Test
    void capturedAtIsUtc() {
        // Instants are points in time: whatever zone they were made in, they are written in UTC.
        Instant t = java.time.OffsetDateTime.parse("2026-06-01T12:00:00+02:00").toInstant();
        MaskRecord r = new MaskRecord("s", 0, 0, t, 2, 1, "m", List.of());
        assertTrue(new String(MaskRecordJson.write(r), StandardCharsets.UTF_8)
                .contains("\"captured_at\":\"2026-06-01T10:00:00Z\""));
    }

    @Test
    void unknownFieldsAreIgnored() {
        String json = new String(MaskRecordJson.write(sample()), StandardCharsets.UTF_8)
                .replace("\"model\"", "\"later\":{\"x\":[1]},\"model\"");
        assertEquals(sample(), MaskRecordJson.read(json.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void errorsNameTheField() {
        String json = new String(MaskRecordJson.write(sample()), StandardCharsets.UTF_8);
        assertMessage(json.replace(",\"counts\":\"a1b2\\\\\\\"c3\"", ""), "objects[0].mask.counts");
        assertMessage(json.replace("[10,20,110,220]", "[10,20,110]"), "objects[0].box");
        assertMessage(json.replace("\"frame\":42", "\"frame\":\"42\""), "'frame' must be an integer");
        assertMessage(json.replace("2026-01-02T03:04:05.678Z", "yesterday"), "captured_at");
        assertMessage(json.replace("\"stream\":\"cam-1\",", ""), "'stream'");
        assertMessage(json.replace("[720,1280]", "[72,128]"), "differs from the frame's");
        assertMessage("[1,2]", "must be a JSON object");
        assertMessage("{\"stream\":", "not JSON");
    }

    @Test
    void invalidRecordsAreRefusedAtConstruction() {
        Instant t = Instant.EPOCH;
        assertThrows(IllegalArgumentException.class, () -> new MaskRecord(" ", 0, 0, t, 1, 1, "m", List.of()));
        assertThrows(IllegalArgumentException.class, () -> new MaskRecord("s", -1, 0, t, 1, 1, "m", List.of()));
        assertThrows(IllegalArgumentException.class, () -> new MaskRecord("s", 0, 0, t, 0, 1, "m", List.of()));
        assertThrows(IllegalArgumentException.class, () -> new MaskRecord.Box(5, 0, 4, 1));
        assertThrows(IllegalArgumentException.class, () -> new MaskRecord.ObjectMask(1, Float.NaN, 1,
                new MaskRecord.Box(0, 0, 0, 0), 0, new MaskRecord.Rle(1, 1, "1")));
        assertThrows(IllegalArgumentException.class, () -> new MaskRecord("s", 0, 0, t, 2, 2, "m",
                List.of(new MaskRecord.ObjectMask(1, 1, 1, new MaskRecord.Box(0, 0, 0, 0), 0,
                        new MaskRecord.Rle(1, 2, "1")))));
    }

    private static void assertMessage(String json, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MaskRecordJson.read(json.getBytes(StandardCharsets.UTF_8)), json);
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
