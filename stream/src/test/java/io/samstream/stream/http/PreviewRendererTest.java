package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.connectors.record.MaskRecord;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The objects a preview carries to the console: each with its box, score and colour, and the concept that found it. */
class PreviewRendererTest {
    @Test
    void theObjectsCarryTheConceptThatFoundThemAndNothingWhereNoneDid() throws Exception {
        MaskRecord.Rle rle = new MaskRecord.Rle(4, 8, "32");
        MaskRecord r = new MaskRecord("cam", 7, 280, Instant.parse("2026-12-05T08:00:00Z"), 8, 4, "sam3", List.of(
                new MaskRecord.ObjectMask(1000000, 0.9f, 0.95f, new MaskRecord.Box(1, 1, 3, 2), 2, rle, "red car"),
                new MaskRecord.ObjectMask(2, 0.8f, 0.9f, new MaskRecord.Box(0, 0, 1, 1), 1, rle)), List.of(3), List.of());
        JsonNode j = new ObjectMapper().readTree(PreviewRenderer.objectsJson(r, 640, 320));
        assertEquals(7, j.get("frame").asLong());
        JsonNode concept = j.get("objects").get(0);
        assertEquals(1000000, concept.get("id").asInt());
        assertEquals("red car", concept.get("concept").asText());
        assertEquals(List.of(1, 1, 3, 2), List.of(concept.get("box").get(0).asInt(), concept.get("box").get(1).asInt(),
                concept.get("box").get(2).asInt(), concept.get("box").get(3).asInt()));
        assertEquals(PreviewRenderer.colour(1000000), concept.get("colour").asText());
        assertFalse(j.get("objects").get(1).has("concept"), j.toString());
        assertEquals(3, j.get("hidden").get(0).asInt());
    }
}
