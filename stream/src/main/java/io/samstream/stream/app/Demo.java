package io.samstream.stream.app;

import io.samstream.config.ClusterSettings;
import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec;
import io.samstream.config.SamstreamConfig;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.KafkaClients;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.stream.engine.FrameSink;
import io.samstream.stream.engine.StreamHandle;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * {@code samstream demo}: one generated clip through the whole engine (bundled model, embedded Kafka
 * unless the configuration names brokers), its records read back from Kafka, and a summary.
 */
public final class Demo {
    static final String STREAM = "demo";
    private static final Duration READ_BACK = Duration.ofSeconds(60);

    private static final int WIDTH = 320;
    private static final int HEIGHT = 240;
    private static final long SEED = 0;

    private Demo() {}

    /**
     * With tracking on, the demo's objects are the clip's shapes, each prompted with its box in frame 0
     * (from the generator's ground truth, as a user would draw them), ids 1, 2, ...; tracking follows them.
     */
    static PromptSpec firstFrameBoxes() {
        List<PromptSpec.ObjectPrompt> objects = new ArrayList<>();
        List<TestPatternSource.PatternObject> shapes = new TestPatternSource(STREAM, WIDTH, HEIGHT, 12, 1, SEED, false)
                .objectsAt(0);
        for (int i = 0; i < shapes.size(); i++) {
            int[] b = shapes.get(i).box();
            objects.add(new PromptSpec.ObjectPrompt(i + 1, null, new double[] {Math.max(0, b[0]), Math.max(0, b[1]),
                Math.min(WIDTH, b[2]), Math.min(HEIGHT, b[3])}));
        }
        return new PromptSpec(objects, 0);
    }

    /** The bundled models the demo can run instead of the configuration's checkpoint. */
    public enum Model {
        /** examples/sam-demo-synthetic.pth: SAM, kalman tracking (the default with no checkpoint configured). */
        SAM(BundledModel.FILE, List.of()),
        /** examples/sam2-demo-synthetic.pt: a tiny SAM 2.1, memory mode. */
        SAM2(BundledModel.SAM2_FILE, List.of()),
        /**
         * examples/sam3-demo-synthetic.pt: a tiny SAM 3, concept mode: it looks for "red circle" and "square" (the
         * clip's red disc and green box) with nothing prompted.
         */
        SAM3(BundledModel.SAM3_FILE, List.of("red circle", "square"));

        private final String file;
        private final List<String> concepts;

        Model(String file, List<String> concepts) {
            this.file = file;
            this.concepts = concepts;
        }

        /** The model's file in the checkout (examples/...). */
        public String file() {
            return file;
        }

        /** What the demo's stream looks for with this model; none: the clip's shapes are prompted by their boxes. */
        public List<String> concepts() {
            return concepts;
        }

        /**
         * The demo stream's prompts: {@code model}'s concepts when it has some (SAM 3), else {@code otherwise} (the
         * clip's shapes by their boxes, or the configuration's prompts).
         */
        static PromptSpec prompts(Optional<Model> model, PromptSpec otherwise) {
            List<String> concepts = model.map(Model::concepts).orElse(List.of());
            return concepts.isEmpty() ? otherwise : PromptSpec.ofConcepts(concepts);
        }

        /** Where the bundled file is ($SAMSTREAM_HOME, the jar's checkout, the working directory). */
        public Path locate() {
            return BundledModel.locate(file);
        }
    }

    /** @return 0 when every frame was published and read back, 1 otherwise */
    public static int run(SamstreamConfig base, Path out, int frames, PrintWriter print, boolean terminal)
            throws Exception {
        return run(base, Optional.empty(), out, frames, print, terminal);
    }

    /**
     * The demo with a bundled model in place of the configuration's checkpoint (empty: the configuration's, or
     * the bundled SAM when it names none).
     *
     * @return 0 when every frame was published and read back, 1 otherwise
     */
    public static int run(SamstreamConfig base, Optional<Model> model, Path out, int frames, PrintWriter print,
            boolean terminal) throws Exception {
        Optional<Path> checkpoint = model.isPresent() ? Optional.of(model.get().locate()) : base.checkpoint();
        Files.createDirectories(out);
        // A demo's output is its run's alone: masks.jsonl appends (the engine never drops what it wrote),
        // so an earlier demo's files in DIR are replaced, not continued.
        for (String name : List.of("masks.jsonl", "overlay.mp4")) {
            Files.deleteIfExists(out.resolve(name));
        }
        String location = "testpattern:" + WIDTH + "x" + HEIGHT + "@12?frames=" + frames + "&seed=" + SEED;
        PromptSpec prompts = Model.prompts(model,
                base.tracking().enabled() ? firstFrameBoxes() : base.streamDefaults().prompts());
        List<String> concepts = prompts.concepts();
        StreamSpec stream = new StreamSpec(STREAM, location, StreamSpec.Live.FALSE, base.streamDefaults().decoder(),
                prompts);
        SamstreamConfig config = new SamstreamConfig(checkpoint, base.device(), base.cpuThreads(), base.kafka(),
                List.of(stream), base.streamDefaults(), base.batching(), base.pipeline(), base.reconnect(),
                new EngineSettings.Sinks(true, Optional.of(out), Optional.of(out)),
                base.metrics(), Optional.empty(), base.tracking(), base.discovery(), base.sparsity(), ClusterSettings.OFF,
                base.gpus(), base.cuda(), base.limits(), base.http().withPort(0));
        Instant started = Instant.now();
        // The demo's files go straight into DIR, not DIR/<stream>.
        Function<SamstreamConfig, Optional<FrameSink>> files = c -> VideoConnectors.fileSinks(out.resolve("masks.jsonl"),
                out.resolve("overlay.mp4"));
        try (SamstreamRuntime rt = SamstreamRuntime.start(config, VideoConnectors.sources(), files)) {
            print.printf("samstream demo: %d frames of %s, model %s, masks to Kafka topic %s on %s%s%n", frames, location,
                    rt.modelName(), config.kafka().masksTopic(), rt.bootstrapServers(),
                    rt.embeddedBrokerDir().map(d -> " (embedded broker, data kept in " + d + ")").orElse(""));
            rt.httpServer().ifPresent(h -> print.printf("console: %s (API: %sapi/v1/streams, metrics: %smetrics)%n",
                    h.url(), h.url(), h.url()));
            print.println(!concepts.isEmpty()
                    ? "looking for " + concepts.stream().map(c -> '"' + c + '"').collect(Collectors.joining(" and "))
                            + " on every frame: each object found gets its id (from 1000000) and is followed"
                    : base.tracking().enabled()
                    ? "tracking the clip's shapes: ids 1-" + prompts.objects().size() + " prompted with their boxes in frame 0"
                            + " (as a user would draw them), then followed"
                    : "tracking off: the configured prompts on every frame");
            print.flush();
            StreamHandle handle = rt.configuredStreams().get(0);
            StreamHandle.Result result;
            try (Progress progress = new Progress(print, terminal, rt.engine()::streams, OptionalLong.of(frames))) {
                result = handle.result().toCompletableFuture().join();
                progress.finish(List.of(handle));
            }
            long acked = rt.kafkaSink().map(k -> k.kafka().ackedCount()).orElse(0L);
            print.printf("published: stream %s %s, %d frames decoded, %d records acknowledged by Kafka%s%n",
                    STREAM, result.state().name().toLowerCase(Locale.ROOT), result.decoded(), acked,
                    result.error().map(e -> " - " + e.getMessage()).orElse(""));

            List<MaskRecord> read = readBack(rt.kafkaClients(), config.kafka().masksTopic(), started,
                    (int) result.published());
            print.println(summary(read, result.published()));
            for (String name : List.of("masks.jsonl", "overlay.mp4")) {
                Path p = out.resolve(name);
                if (Files.isRegularFile(p)) {
                    print.printf("wrote %s (%d bytes)%n", p, Files.size(p));
                }
            }
            print.flush();
            boolean ok = result.state() == StreamHandle.State.ENDED && result.published() == frames
                    && read.size() == frames;
            return ok ? 0 : 1;
        }
    }

    /** One line per stream: what was read, in order or not, the objects, and the first frame's masks. */
    static String summary(List<MaskRecord> records, long published) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "read back from Kafka: %d records (%d published)", records.size(), published));
        if (records.isEmpty()) {
            return sb.toString();
        }
        boolean inOrder = true;
        for (int i = 0; i < records.size(); i++) {
            inOrder &= records.get(i).frame() == i;
        }
        TreeSet<Integer> ids = new TreeSet<>();
        List<String> lost = new ArrayList<>();
        double score = 0;
        double stability = 0;
        int objects = 0;
        for (MaskRecord r : records) {
            r.lost().forEach(id -> lost.add(id + " at frame " + r.frame()));
            for (MaskRecord.ObjectMask o : r.objects()) {
                ids.add(o.id());
                score += o.score();
                stability += o.stability();
                objects++;
            }
        }
        MaskRecord first = records.get(0);
        sb.append(String.format(Locale.ROOT, "%n  stream %s: frames %d..%d%s, %dx%d, model %s, object ids %s,"
                        + " mean score %.3f, mean stability %.3f", first.stream(), first.frame(),
                records.get(records.size() - 1).frame(), inOrder ? " in order" : " OUT OF ORDER", first.width(),
                first.height(), first.model(), ids, objects == 0 ? 0 : score / objects,
                objects == 0 ? 0 : stability / objects));
        sb.append(String.format(Locale.ROOT, "%n  objects lost: %s", lost.isEmpty() ? "none" : String.join(", ", lost)));
        for (MaskRecord.ObjectMask o : first.objects()) {
            sb.append(String.format(Locale.ROOT, "%n    frame %d object %d: score %.3f stability %.3f box [%d,%d,%d,%d]"
                            + " area %d rle %s", first.frame(), o.id(), o.score(), o.stability(), o.box().x0(),
                    o.box().y0(), o.box().x1(), o.box().y1(), o.area(), abbreviate(o.mask().counts())));
        }
        return sb.toString();
    }

    private static String abbreviate(String s) {
        return s.length() <= 24 ? s : s.substring(0, 21) + "...";
    }

    /** The demo stream's records of this run, read back as a consumer would. */
    static List<MaskRecord> readBack(KafkaClients clients, String topic, Instant since, int expected) {
        List<MaskRecord> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = clients.consumer("samstream-demo-reader", Map.of(
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(topic, READ_BACK)) {
                partitions.add(new TopicPartition(topic, p.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + READ_BACK.toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (!STREAM.equals(r.key())) {
                        continue;
                    }
                    MaskRecord m = MaskRecordJson.read(r.value());
                    if (!m.capturedAt().isBefore(since)) {
                        out.add(m);
                    }
                }
            }
        }
        return out;
    }
}
