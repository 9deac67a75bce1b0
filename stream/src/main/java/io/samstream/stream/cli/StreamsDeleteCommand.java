package io.samstream.stream.cli;

import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.stream.engine.LogSafe;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code samstream streams delete ID}: a tombstone for a stream defined on the streams topic; the engine that
 * runs it stops it. A stream that is not defined there is an error (a typo would otherwise delete nothing).
 */
@Command(
        name = "delete",
        mixinStandardHelpOptions = true,
        description = "Delete a stream definition from the streams topic (a tombstone): the engine running it stops it.")
final class StreamsDeleteCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions kafka;

    @Mixin
    StreamsTopicOption streamsTopic;

    @Parameters(index = "0", paramLabel = "ID", description = "The stream's id.")
    String id;

    @Override
    public Integer call() {
        String topic = streamsTopic.resolve(kafka);
        if (!StreamSpec.ID.matcher(id).matches()) {
            throw new ParameterException(spec.commandLine(), "stream id '" + LogSafe.of(id)
                    + "' must be 1-128 of A-Z a-z 0-9 . _ - and start with a letter or digit");
        }
        KafkaClients clients = kafka.connect();
        StreamDefinitions defs = StreamDefinitions.read(clients, topic, kafka.timeout());
        if (!defs.byId.containsKey(id)) {
            throw new IllegalArgumentException("stream '" + id + "' is not defined on topic " + topic
                    + (defs.byId.isEmpty() ? " (no stream is)" : " (defined: " + names(defs) + ")"));
        }
        var sent = Records.send(clients, topic, id, null, kafka.timeout());
        spec.commandLine().getOut().printf("deleted %s from %s (a tombstone at partition %d, offset %d)%n", id, topic,
                sent.partition(), sent.offset());
        spec.commandLine().getOut().flush();
        return 0;
    }

    /** The defined ids, the first ten. */
    static String names(StreamDefinitions defs) {
        return String.join(", ", defs.byId.keySet().stream().limit(10).toList())
                + (defs.byId.size() > 10 ? ", ... (" + defs.byId.size() + " in all)" : "");
    }
}
