package io.samstream.stream.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.stream.engine.ControlTopics;
import io.samstream.stream.engine.LogSafe;
import io.samstream.stream.engine.PromptMessage;
import io.samstream.stream.engine.PromptRejected;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code samstream prompts add|update|remove|reset|concept|remove-concept}: one message on the prompts topic (key = stream id), checked
 * by the engine's own {@link PromptMessage#parse} before it is sent and written in its JSON form
 * ({@link PromptMessage#toJson}). In a cluster the engine that owns the stream applies it, wherever the stream
 * runs. The stream must be defined (streams topic, or the {@code -c} file's streams) unless {@code --no-check}.
 */
@Command(
        name = "prompts",
        mixinStandardHelpOptions = true,
        description = {
            "Change a running stream's objects through the prompts topic (samstream.kafka.prompts-topic): add an"
                    + " object, update its prompt, remove it, or reset the stream to its configured prompts.",
            "Coordinates are frame pixels. The engine running the stream applies it from --frame, else from its next"
                    + " frame. With a SAM 3 checkpoint: look for a concept (a noun phrase) or stop looking for one."
        })
final class PromptsCommand {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Command(name = "add", mixinStandardHelpOptions = true,
            description = "Follow a new object from its points and/or box.")
    int add(@Mixin KafkaOptions kafka, @Mixin StreamsTopicOption topic, @Mixin PromptTarget target,
            @Mixin ObjectPromptOptions prompt) {
        return send(kafka, topic, target, PromptMessage.Op.ADD, prompt.object, prompt);
    }

    @Command(name = "update", mixinStandardHelpOptions = true,
            description = "Replace an object's prompt (its id stays).")
    int update(@Mixin KafkaOptions kafka, @Mixin StreamsTopicOption topic, @Mixin PromptTarget target,
            @Mixin ObjectPromptOptions prompt) {
        return send(kafka, topic, target, PromptMessage.Op.UPDATE, prompt.object, prompt);
    }

    @Command(name = "remove", mixinStandardHelpOptions = true, description = "Stop following an object.")
    int remove(@Mixin KafkaOptions kafka, @Mixin StreamsTopicOption topic, @Mixin PromptTarget target,
            @Option(names = "--object", required = true, paramLabel = "N", description = "The object's id.") int object) {
        return send(kafka, topic, target, PromptMessage.Op.REMOVE, object, null);
    }

    @Command(name = "reset", mixinStandardHelpOptions = true,
            description = "Drop every object and go back to the stream's configured prompts.")
    int reset(@Mixin KafkaOptions kafka, @Mixin StreamsTopicOption topic, @Mixin PromptTarget target) {
        return send(kafka, topic, target, PromptMessage.Op.RESET, -1, null);
    }

    @Command(name = "concept", mixinStandardHelpOptions = true,
            description = "SAM 3: find and follow every instance of a noun phrase (exemplar boxes: the topic's JSON).")
    int concept(@Mixin KafkaOptions kafka, @Mixin StreamsTopicOption topic, @Mixin PromptTarget target,
            @Option(names = "--text", required = true, paramLabel = "PHRASE", description = "The noun phrase.")
            String text) {
        return send(kafka, topic, target, conceptJson(target, PromptMessage.Op.CONCEPT, text));
    }

    @Command(name = "remove-concept", mixinStandardHelpOptions = true,
            description = "SAM 3: stop looking for a noun phrase (its objects end).")
    int removeConcept(@Mixin KafkaOptions kafka, @Mixin StreamsTopicOption topic, @Mixin PromptTarget target,
            @Option(names = "--text", required = true, paramLabel = "PHRASE", description = "The noun phrase.")
            String text) {
        return send(kafka, topic, target, conceptJson(target, PromptMessage.Op.REMOVE_CONCEPT, text));
    }

    private static int send(KafkaOptions kafka, StreamsTopicOption topic, PromptTarget target, PromptMessage.Op op,
            int object, ObjectPromptOptions prompt) {
        return send(kafka, topic, target, json(target, op, object, prompt));
    }

    private static int send(KafkaOptions kafka, StreamsTopicOption topic, PromptTarget target, String json) {
        var cmd = kafka.spec.commandLine();
        PromptMessage message;
        try {
            message = PromptMessage.parse(target.stream, json);
        } catch (PromptRejected e) {
            throw new ParameterException(cmd, e.getMessage() + " (" + e.reason() + ")");
        }
        if (!StreamSpec.ID.matcher(message.stream()).matches()) {
            throw new ParameterException(cmd, "--stream '" + LogSafe.of(message.stream())
                    + "' is not a stream id (1-128 of A-Z a-z 0-9 . _ -, starting with a letter or digit)");
        }
        KafkaClients clients = kafka.connect();
        checkStream(kafka, topic, target, clients);
        ControlTopics.ensurePromptsTopic(clients, kafka.config());
        String promptsTopic = kafka.config().kafka().promptsTopic();
        var sent = Records.send(clients, promptsTopic, message.stream(), message.toJson(), kafka.timeout());
        PromptMessage.Op op = message.op();
        String what = op == PromptMessage.Op.RESET ? "" : message.concept() != null
                ? " \"" + LogSafe.of(message.concept().text()) + "\"" : " of object " + message.object();
        cmd.getOut().printf("sent %s%s to stream %s (topic %s, partition %d, offset %d): applies from %s%n",
                op.wireName(), what, message.stream(),
                promptsTopic, sent.partition(), sent.offset(),
                message.frame().isPresent() ? "frame " + message.frame().getAsLong() : "the stream's next frame");
        cmd.getOut().flush();
        return 0;
    }

    /** A concept op's message; {@link PromptMessage#parse} judges it as the engine will. */
    private static String conceptJson(PromptTarget target, PromptMessage.Op op, String text) {
        ObjectNode root = JSON.createObjectNode();
        root.put("stream", target.stream).put("op", op.wireName()).put("text", text);
        if (target.frame != null) {
            root.put("frame", target.frame);
        }
        return root.toString();
    }

    /** The message as the options give it; {@link PromptMessage#parse} judges it as the engine will. */
    private static String json(PromptTarget target, PromptMessage.Op op, int object, ObjectPromptOptions prompt) {
        ObjectNode root = JSON.createObjectNode();
        root.put("stream", target.stream);
        root.put("op", op.wireName());
        if (op != PromptMessage.Op.RESET) {
            root.put("object", object);
        }
        if (prompt != null) {
            if (!prompt.points.isEmpty()) {
                ArrayNode points = root.putArray("points");
                prompt.points.forEach(p -> points.addArray().add(p[0]).add(p[1]).add((int) p[2]));
            }
            if (prompt.box != null) {
                ArrayNode box = root.putArray("box");
                for (double v : prompt.box.corners()) {
                    box.add(v);
                }
            }
        }
        if (target.frame != null) {
            root.put("frame", target.frame);
        }
        return root.toString();
    }

    /**
     * A prompt for a stream no engine runs is dropped by the engines (logged there): refused here instead, when
     * the stream is neither on the streams topic nor among the configuration's streams.
     */
    private static void checkStream(KafkaOptions kafka, StreamsTopicOption topic, PromptTarget target,
            KafkaClients clients) {
        if (target.noCheck || kafka.config().streams().stream().anyMatch(s -> s.id().equals(target.stream))) {
            return;
        }
        Optional<String> streamsTopic = topic.find(kafka);
        if (streamsTopic.isEmpty()) {
            kafka.spec.commandLine().getErr().println("samstream: note: stream " + target.stream
                    + " not checked: no streams topic (--streams-topic or samstream.streams-topic)");
            return;
        }
        StreamDefinitions defs = StreamDefinitions.read(clients, streamsTopic.get(), kafka.timeout());
        if (!defs.byId.containsKey(target.stream)) {
            throw new IllegalArgumentException("stream '" + target.stream + "' is not defined on topic "
                    + streamsTopic.get() + (defs.byId.isEmpty() ? " (no stream is)" : " (defined: "
                    + StreamsDeleteCommand.names(defs) + ")") + "; --no-check sends it anyway");
        }
    }
}
