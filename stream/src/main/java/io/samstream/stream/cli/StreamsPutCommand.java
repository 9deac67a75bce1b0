package io.samstream.stream.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.config.ConfigException;
import io.samstream.config.SamstreamConfig;
import io.samstream.config.StreamSpec;
import io.samstream.config.StreamSpecs;
import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.connectors.video.FrameSources;
import io.samstream.stream.engine.ControlTopics;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code samstream streams put ID --location L ...}: writes a stream definition (key = ID, value = the JSON
 * of a {@code samstream.streams} entry) to the streams topic, after checking it with the engine's own parser
 * ({@link StreamSpecs#fromJson}), so that what the engine would skip is refused here with the same reason.
 * The streams topic is created as the engines create it when it does not exist yet ({@link ControlTopics}).
 */
@Command(
        name = "put",
        mixinStandardHelpOptions = true,
        description = {
            "Define a stream on the streams topic (add it, or redefine it: the engine running it restarts it).",
            "Prompts: --prompts with a prompts section as JSON ({\"objects\":[{\"id\":1,\"box\":[x0,y0,x1,y1]}],"
                    + " \"grid\":0}), or one object from --object/--point/--box and a --grid, or (SAM 3) the phrases"
                    + " of --concept with --concepts-every-frames; none: the engines' samstream.stream-defaults.prompts."
        })
final class StreamsPutCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandSpec spec;

    @Mixin
    KafkaOptions kafka;

    @Mixin
    StreamsTopicOption streamsTopic;

    @Parameters(index = "0", paramLabel = "ID", description = "The stream's id (record key, metric tag, folder name).")
    String id;

    @Option(names = "--location", required = true, paramLabel = "L",
            description = "A file, a URL (rtsp, http(s), hls, srt, udp, ...), a V4L2 device or"
                    + " testpattern:WxH@FPS[?frames=N&seed=S&live=true].")
    String location;

    @Option(names = "--live", paramLabel = "auto|true|false", description = "Whether frames arrive in real time"
            + " (default: the engines' stream-defaults; auto guesses from the location).")
    String live;

    @Option(names = "--decoder", paramLabel = "auto|nvdec|cpu", description = "Which decoder to prefer.")
    String decoder;

    @Option(names = "--prompts", paramLabel = "JSON", description = "The stream's prompts section as JSON.")
    String prompts;

    @Option(names = "--object", paramLabel = "N", description = "The id of the object --point/--box prompt"
            + " (default: 1).")
    Integer object;

    @Option(names = "--point", paramLabel = "X,Y[,LABEL]", converter = PointConverter.class,
            description = "A point of the object, in frame pixels; LABEL 1 (default) = foreground, 0 = background."
                    + " Repeatable.")
    List<double[]> points = new ArrayList<>();

    @Option(names = "--box", paramLabel = "X0,Y0,X1,Y1", converter = BoxConverter.class,
            description = "The object's box, in frame pixels.")
    BoxConverter.Box box;

    @Option(names = "--grid", paramLabel = "N", description = "An N x N grid of point prompts (ids 1000 up).")
    Integer grid;

    @Option(names = "--concept", paramLabel = "TEXT", description = "A noun phrase whose every instance is found"
            + " and tracked (a SAM 3 checkpoint's engines only), e.g. --concept person --concept forklift. Repeatable.")
    List<String> concepts = new ArrayList<>();

    @Option(names = "--concepts-every-frames", paramLabel = "N", description = "Run the concept detector on every"
            + " N-th frame of this stream (1 to 10000; default: the engines' samstream.tracking.concepts.every-frames).")
    Integer conceptsEveryFrames;

    @Override
    public Integer call() throws Exception {
        String topic = streamsTopic.resolve(kafka);
        SamstreamConfig config = kafka.config();
        String json = definition();
        StreamSpec parsed;
        try {
            parsed = StreamSpecs.fromJson(id, json, config.streamDefaults());
        } catch (ConfigException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        KafkaClients clients = kafka.connect();
        ControlTopics.ensureStreamsTopic(clients, config, topic);
        var sent = Records.send(clients, topic, id, json, kafka.timeout());
        spec.commandLine().getOut().printf("put %s on %s (partition %d, offset %d): %s, %s, decoder %s%n", id, topic,
                sent.partition(), sent.offset(), FrameSources.redacted(parsed.location()),
                parsed.isLive() ? "live" : "file", parsed.decoder().name().toLowerCase(java.util.Locale.ROOT));
        spec.commandLine().getOut().flush();
        return 0;
    }

    /** The definition's JSON from the options: only what was given (the engines fill in their defaults). */
    private String definition() {
        ObjectNode root = JSON.createObjectNode();
        root.put("location", location);
        if (live != null) {
            root.put("live", live);
        }
        if (decoder != null) {
            root.put("decoder", decoder);
        }
        boolean flags = object != null || !points.isEmpty() || box != null || grid != null || !concepts.isEmpty()
                || conceptsEveryFrames != null;
        if (prompts != null && flags) {
            throw new ParameterException(spec.commandLine(), "--prompts and --object/--point/--box/--grid/--concept"
                    + " both give prompts: use one");
        }
        if (conceptsEveryFrames != null && concepts.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "--concepts-every-frames " + conceptsEveryFrames
                    + " needs --concept");
        }
        if (prompts != null) {
            JsonNode p;
            try {
                p = JSON.readTree(prompts);
            } catch (JsonProcessingException e) {
                throw new ParameterException(spec.commandLine(), "--prompts: not valid JSON: "
                        + e.getOriginalMessage());
            }
            root.set("prompts", p);
        } else if (flags) {
            ObjectNode p = root.putObject("prompts");
            if (!points.isEmpty() || box != null) {
                ObjectNode o = p.putArray("objects").addObject();
                o.put("id", object == null ? 1 : object);
                if (!points.isEmpty()) {
                    ArrayNode pts = o.putArray("points");
                    points.forEach(pt -> pts.addArray().add(pt[0]).add(pt[1]).add((int) pt[2]));
                }
                if (box != null) {
                    ArrayNode b = o.putArray("box");
                    for (double v : box.corners()) {
                        b.add(v);
                    }
                }
            } else if (object != null) {
                throw new ParameterException(spec.commandLine(), "--object " + object + " needs --point or --box");
            }
            if (grid != null) {
                p.put("grid", grid);
            }
            if (!concepts.isEmpty()) {
                ArrayNode c = p.putArray("concepts");
                concepts.forEach(c::add);
            }
            if (conceptsEveryFrames != null) {
                p.put("concepts-every-frames", conceptsEveryFrames);
            }
        }
        return root.toString();
    }
}
