package io.samstream.connectors.kafka;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Kafka value deserializer of {@link MaskRecord}s. A record whose {@value MaskRecord#SCHEMA_HEADER}
 * header names a version it does not know ({@link MaskRecord#READABLE_VERSIONS}: 1 and 2), or whose value is
 * not a mask record, fails with a {@link SerializationException} that says why; a record without the header is
 * read as version 1.
 */
public final class MaskRecordDeserializer implements Deserializer<MaskRecord> {

    @Override
    public MaskRecord deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        try {
            return MaskRecordJson.read(data);
        } catch (IllegalArgumentException e) {
            throw new SerializationException("topic " + topic + ": " + e.getMessage(), e);
        }
    }

    @Override
    public MaskRecord deserialize(String topic, Headers headers, byte[] data) {
        Header version = headers == null ? null : headers.lastHeader(MaskRecord.SCHEMA_HEADER);
        if (version != null) {
            String v = version.value() == null ? "" : new String(version.value(), StandardCharsets.UTF_8);
            if (!MaskRecord.READABLE_VERSIONS.contains(v)) {
                throw new SerializationException("topic " + topic + ": mask record schema version '" + v
                        + "' is not supported (this reader knows 1 and 2)");
            }
        }
        return deserialize(topic, data);
    }
}
