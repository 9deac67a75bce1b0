package io.samstream.connectors.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** Mask records to publish (the testkit's KafkaTopics reads a topic back). */
final class TestRecords {
    static final Instant T0 = Instant.parse("2026-01-02T03:04:05.678Z");

    private TestRecords() {}

    /** A frame of 64x48 with {@code frame % 3} objects, every field derived from stream and frame. */
    static MaskRecord frame(String stream, long frame) {
        List<MaskRecord.ObjectMask> objects = new ArrayList<>();
        for (int i = 0; i < frame % 3; i++) {
            objects.add(new MaskRecord.ObjectMask(i + 1, 0.5f + i / 8f + frame / 1000f, 0.9f - i / 16f,
                    new MaskRecord.Box(i, 2 * i, 10 + i, 20 + i), 100L + frame + i,
                    new MaskRecord.Rle(48, 64, "PPYo0" + stream.length() + "a1O" + frame + "_" + i)));
        }
        return new MaskRecord(stream, frame, frame * 40, T0.plusMillis(frame * 40), 64, 48, "sam_vit_b", objects);
    }

    static Set<String> fieldNames(JsonNode node) {
        Set<String> names = new TreeSet<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
