package io.samstream.stream.cli;

import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import io.samstream.stream.app.Demo;
import io.samstream.stream.app.DemoUi;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code samstream demo}: the whole engine on embedded defaults, end to end, and what came out. */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description = {
            "Run the engine end to end on embedded defaults: a generated clip, a bundled model (--model), an"
                    + " embedded Kafka broker. Reads its own records back from Kafka and prints what was published and read;"
                    + " writes DIR/masks.jsonl and DIR/overlay.mp4.",
            "With --ui: the clip's scene as a live stream with the web console on 127.0.0.1 (the URL is printed);"
                    + " click a shape to follow it. Runs until Ctrl-C."
        })
final class DemoCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "out/demo",
            description = "Output directory (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--frames", paramLabel = "N", defaultValue = "24",
            description = "Frames of the generated clip (default: ${DEFAULT-VALUE}).")
    int frames;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
            description = "Configuration file to start from (model, device, Kafka brokers); its streams are not used.")
    Path configFile;

    @Option(names = "--model", paramLabel = "sam|sam2|sam3",
            description = "A bundled model: sam (examples/sam-demo-synthetic.pth, kalman tracking; the default),"
                    + " sam2 (examples/sam2-demo-synthetic.pt, a tiny SAM 2.1: memory mode) or sam3"
                    + " (examples/sam3-demo-synthetic.pt, a tiny SAM 3: it looks for \"red circle\" and \"square\")."
                    + " Not with a configuration that sets samstream.model.checkpoint.")
    String model;

    @Option(names = "--ui", description = "Live, with the web console on 127.0.0.1 until Ctrl-C (see above).")
    boolean ui;

    @Option(names = "--port", paramLabel = "P",
            description = "With --ui: the console's port (default: samstream.http.port, 8080; 0 picks a free one).")
    Integer port;

    @Override
    public Integer call() throws Exception {
        if (port != null && (!ui || port < 0 || port > 65535)) {
            throw new ParameterException(spec.commandLine(), ui ? "--port must be 0 to 65535, got " + port
                    : "--port goes with --ui");
        }
        if (frames < 1 || frames > 10_000) {
            throw new ParameterException(spec.commandLine(), "--frames must be 1 to 10000, got " + frames);
        }
        Optional<Demo.Model> bundled = Optional.empty();
        if (model != null) {
            bundled = Optional.of(switch (model) {
                case "sam" -> Demo.Model.SAM;
                case "sam2" -> Demo.Model.SAM2;
                case "sam3" -> Demo.Model.SAM3;
                default -> throw new ParameterException(spec.commandLine(), "--model must be sam, sam2 or sam3, got '"
                        + model + "'");
            });
        }
        SamstreamConfig base = configFile == null ? ConfigLoader.load() : ConfigLoader.load(configFile);
        if (bundled.isPresent() && base.checkpoint().isPresent()) {
            throw new ParameterException(spec.commandLine(), "--model " + model + " and samstream.model.checkpoint = "
                    + base.checkpoint().get() + " (from " + (configFile == null ? "system properties" : configFile)
                    + ") both name a model: use one");
        }
        if (ui) {
            return DemoUi.run(base, bundled, out, port == null ? OptionalInt.empty() : OptionalInt.of(port),
                    spec.commandLine().getOut());
        }
        return Demo.run(base, bundled, out, frames, spec.commandLine().getOut(), System.console() != null);
    }
}
