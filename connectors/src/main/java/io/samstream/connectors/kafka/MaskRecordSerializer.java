package io.samstream.connectors.kafka;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Kafka value serializer of {@link MaskRecord}s: UTF-8 JSON, and the schema version in the
 * {@value MaskRecord#SCHEMA_HEADER} header (set here, so that no record leaves without it).
 */
public final class MaskRecordSerializer implements Serializer<MaskRecord> {
    private static final byte[] VERSION = MaskRecord.SCHEMA_VERSION.getBytes(StandardCharsets.UTF_8);

    @Override
    public byte[] serialize(String topic, MaskRecord record) {
        return record == null ? null : MaskRecordJson.write(record);
    }

    @Override
    public byte[] serialize(String topic, Headers headers, MaskRecord record) {
        headers.remove(MaskRecord.SCHEMA_HEADER);
        headers.add(MaskRecord.SCHEMA_HEADER, VERSION);
        return serialize(topic, record);
    }
}
