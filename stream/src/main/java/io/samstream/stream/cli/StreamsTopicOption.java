package io.samstream.stream.cli;

import com.typesafe.config.ConfigFactory;
import io.samstream.config.ConfigException;
import io.samstream.config.ConfigLoader;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code --streams-topic}: the topic of stream definitions when the configuration names none (a mixin). */
final class StreamsTopicOption {
    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--streams-topic", paramLabel = "TOPIC",
            description = "The topic of stream definitions; wins over samstream.streams-topic.")
    String topic;

    /** {@code --streams-topic} (checked as samstream.streams-topic is), else the configuration's; an error when neither. */
    String resolve(KafkaOptions kafka) {
        if (topic != null) {
            try {
                return ConfigLoader.validate(ConfigFactory.parseMap(Map.of("samstream.streams-topic", topic))
                        .withFallback(ConfigFactory.defaultReference()).resolve(), "--streams-topic").streamsTopic()
                        .orElseThrow(() -> new ParameterException(spec.commandLine(), "--streams-topic must name a topic"));
            } catch (ConfigException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
        }
        return kafka.config().streamsTopic().orElseThrow(() -> new ParameterException(spec.commandLine(),
                "no streams topic: give --streams-topic or set samstream.streams-topic"
                        + (kafka.configFile == null ? " in a file given with -c" : " in " + kafka.configFile)));
    }

    /** The topic if one is named (option or configuration), without failing when none is. */
    java.util.Optional<String> find(KafkaOptions kafka) {
        return topic != null ? java.util.Optional.of(resolve(kafka)) : kafka.config().streamsTopic();
    }
}
