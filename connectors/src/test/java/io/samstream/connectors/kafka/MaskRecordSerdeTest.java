package io.samstream.connectors.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJsonTest;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** {@link MaskRecordSerializer} and {@link MaskRecordDeserializer}: the JSON value and its schema header. */
class MaskRecordSerdeTest {
    private static MaskRecord sample() {
        return MaskRecordJsonTest.sample();
    }

    @Test
    void serializerSetsTheSchemaHeaderAndDeserializerChecksIt() {
        RecordHeaders headers = new RecordHeaders();
        byte[] value;
        try (MaskRecordSerializer serializer = new MaskRecordSerializer()) {
            value = serializer.serialize("t", headers, sample());
            assertNull(serializer.serialize("t", new RecordHeaders(), null));
        }
        assertArrayEquals("2".getBytes(StandardCharsets.UTF_8), headers.lastHeader("samstream.schema").value());
        assertEquals(1, headers.toArray().length);
        try (MaskRecordDeserializer deserializer = new MaskRecordDeserializer()) {
            assertEquals(sample(), deserializer.deserialize("t", headers, value));
            assertEquals(sample(), deserializer.deserialize("t", new RecordHeaders(), value));
            // Version 1 (before 'hidden') is still read; an unknown version is refused.
            RecordHeaders v1 = new RecordHeaders();
            v1.add("samstream.schema", "1".getBytes(StandardCharsets.UTF_8));
            assertEquals(sample(), deserializer.deserialize("t", v1, value));
            RecordHeaders v3 = new RecordHeaders();
            v3.add("samstream.schema", "3".getBytes(StandardCharsets.UTF_8));
            SerializationException e = assertThrows(SerializationException.class,
                    () -> deserializer.deserialize("t", v3, value));
            assertTrue(e.getMessage().contains("schema version '3'"), e.getMessage());
            e = assertThrows(SerializationException.class,
                    () -> deserializer.deserialize("t", headers, "{}".getBytes(StandardCharsets.UTF_8)));
            assertTrue(e.getMessage().contains("topic t"), e.getMessage());
        }
    }
}
