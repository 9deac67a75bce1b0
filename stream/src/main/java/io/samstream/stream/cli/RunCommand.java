package io.samstream.stream.cli;

import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import io.samstream.stream.app.EngineRun;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code samstream run -c app.conf}: the engine on the configured streams. With no streams topic it
 * ends when every configured stream ended (exit 1 if any failed); with one it runs until stopped.
 */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        description = {
            "Run the streaming engine: segment the configured streams and publish mask records.",
            "Ends when every stream of the configuration ended (files), or runs until stopped (Ctrl-C) when"
                    + " samstream.streams-topic is set or a stream is live."
        })
final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = {"-c", "--config"}, required = true, paramLabel = "FILE",
            description = "Configuration file (HOCON); reference.conf documents every key.")
    Path configFile;

    @Override
    public Integer call() throws Exception {
        SamstreamConfig config = ConfigLoader.load(configFile);
        if (config.streams().isEmpty() && config.streamsTopic().isEmpty()) {
            throw new ParameterException(spec.commandLine(), configFile
                    + ": nothing to run: configure samstream.streams or samstream.streams-topic");
        }
        return EngineRun.run(config, spec.commandLine().getOut(), System.console() != null);
    }
}
