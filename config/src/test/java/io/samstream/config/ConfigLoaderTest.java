package io.samstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.samstream.testkit.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
    @TempDir
    Path dir;

    @Test
    void defaultsComeFromReferenceConf() {
        SamstreamConfig c = ConfigLoader.load();
        assertEquals(Device.AUTO, c.device());
        assertTrue(c.checkpoint().isEmpty());
        assertEquals(Runtime.getRuntime().availableProcessors(), c.cpuThreads());
    }

    @Test
    void fileOverridesDefaults() throws IOException {
        Path f = write("samstream { device = cpu, cpu.threads = 3, model.checkpoint = \"/models/sam_vit_b.pth\" }");
        SamstreamConfig c = ConfigLoader.load(f);
        assertEquals(Device.CPU, c.device());
        assertEquals(3, c.cpuThreads());
        assertEquals(Path.of("/models/sam_vit_b.pth"), c.checkpoint().orElseThrow());
    }

    @Test
    void unknownKeyIsNamed() throws IOException {
        Path f = write("samstream { cpu.thread = 3 }");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.cpu.thread"), e.getMessage());
        assertTrue(e.getMessage().startsWith(f.toString()), e.getMessage());
    }

    @Test
    void badDeviceNamesKeyAndChoices() throws IOException {
        Path f = write("samstream.device = tpu");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.device"), e.getMessage());
        assertTrue(e.getMessage().contains("auto, cpu or cuda"), e.getMessage());
    }

    @Test
    void gpusDefaultToEveryVisibleGpu() throws IOException {
        assertEquals(GpuSelection.ALL, ConfigLoader.load().gpus());
        assertEquals(java.util.List.of(0, 1, 2), ConfigLoader.load().gpus().resolve(3));
        assertEquals(java.util.List.of(), ConfigLoader.load().gpus().resolve(0));
        assertEquals(GpuSelection.ALL, ConfigLoader.load(write("samstream.gpus = ALL")).gpus());
    }

    @Test
    void gpusTakeAListOfOrdinalsInTheFileOrAsASystemProperty() throws IOException {
        assertEquals(GpuSelection.of(2, 0), ConfigLoader.load(write("samstream.gpus = [2, 0]")).gpus());
        assertEquals(java.util.List.of(2, 0), GpuSelection.of(2, 0).resolve(3));
        assertEquals("[2, 0]", GpuSelection.of(2, 0).describe());
        withProperty("samstream.gpus", "0,1", () -> assertEquals(GpuSelection.of(0, 1), ConfigLoader.load().gpus()));
        withProperty("samstream.gpus", "all", () -> assertEquals(GpuSelection.ALL, ConfigLoader.load().gpus()));
        // Command-line flags (StreamBench --gpus): one ordinal alone too.
        assertEquals(GpuSelection.of(1), GpuSelection.parse("1", "--gpus"));
        assertEquals(GpuSelection.of(0, 1), GpuSelection.parse(" 0, 1", "--gpus"));
        assertEquals(GpuSelection.ALL, GpuSelection.parse("all", "--gpus"));
        assertThrows(ConfigException.class, () -> GpuSelection.parse("0,0", "--gpus"));
    }

    @Test
    void badGpusAreOneErrorNamingTheKey() throws IOException {
        assertGpus("samstream.gpus = [0, -1]", "GPU ordinal -1 is negative");
        assertGpus("samstream.gpus = [1, 0, 1]", "GPU 1 is listed twice");
        assertGpus("samstream.gpus = []", "the list is empty");
        assertGpus("samstream.gpus = 1", "neither all nor a list of GPU ordinals (write [N] for GPU N alone)");
        assertGpus("samstream.gpus = some", "'some' is neither all nor a list of GPU ordinals");
        assertGpus("samstream.gpus = [0, 1.5]", "'1.5' is not a GPU ordinal");
        assertGpus("samstream.gpus = [[0]]", "is not a GPU ordinal");
        assertGpus("samstream.gpus = true", "true is neither all nor a list of GPU ordinals");
        Path object = write("samstream.gpus { a = 0 }");
        ConfigException o = assertThrows(ConfigException.class, () -> ConfigLoader.load(object));
        assertTrue(o.getMessage().contains("samstream.gpus"), o.getMessage());
        withProperty("samstream.gpus", "0,x", () -> {
            ConfigException e = assertThrows(ConfigException.class, ConfigLoader::load);
            assertTrue(e.getMessage().contains("samstream.gpus: 'x' is not a GPU ordinal"), e.getMessage());
        });
        // Beyond the device count: known only where CUDA is, checked there with the same key named.
        ConfigException e = assertThrows(ConfigException.class, () -> GpuSelection.of(0, 2).resolve(2));
        assertEquals("samstream.gpus: GPU 2 does not exist (2 visible: 0 to 1; CUDA_VISIBLE_DEVICES renumbers them"
                + " from 0)", e.getMessage());
    }

    private void assertGpus(String text, String expected) throws IOException {
        Path f = write(text);
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f), text);
        assertTrue(e.getMessage().startsWith(f + ": samstream.gpus"), e.getMessage());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void wrongTypeNamesKey() throws IOException {
        Path f = write("samstream.cpu.threads = many");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("cpu.threads"), e.getMessage());
    }

    @Test
    void shutdownTimeoutDefaultsTo15sAndIsBounded() throws IOException {
        assertEquals(java.time.Duration.ofSeconds(15), ConfigLoader.load().shutdownTimeout());
        assertEquals(java.time.Duration.ofSeconds(5),
                ConfigLoader.load(write("samstream.shutdown-timeout = 5s")).shutdownTimeout());
        for (String bad : List.of("0s", "500ms", "11m", "-3s")) {
            Path f = write("samstream.shutdown-timeout = " + bad);
            ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f), bad);
            assertTrue(e.getMessage().contains("samstream.shutdown-timeout must be 1 s to 10 min, got " + bad),
                    e.getMessage());
        }
        Path word = write("samstream.shutdown-timeout = soon");
        assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(word)).getMessage()
                .contains("shutdown-timeout"));
    }

    @Test
    void negativeThreadsRejected() throws IOException {
        Path f = write("samstream.cpu.threads = -2");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.cpu.threads must be 0"), e.getMessage());
    }

    @Test
    void missingFileAndSyntaxErrorsNameTheFile() throws IOException {
        Path missing = dir.resolve("nope.conf");
        assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(missing)).getMessage()
                .contains("nope.conf"));
        Path broken = write("samstream { device = ");
        assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(broken)).getMessage()
                .startsWith(broken.toString()));
    }

    @Test
    void unknownSystemPropertyKeysAreRejectedNamingTheProperty() throws IOException {
        Path file = write("samstream.device = cpu");
        withProperty("samstream.modle.device", "cpu", () -> {
            ConfigException e = assertThrows(ConfigException.class, ConfigLoader::load);
            assertEquals("-Dsamstream.modle.device (a system property): unknown key samstream.modle.device"
                    + " (reference.conf documents every key)", e.getMessage());
            e = assertThrows(ConfigException.class, () -> ConfigLoader.load(file));
            assertTrue(e.getMessage().startsWith("-Dsamstream.modle.device (a system property): unknown key"),
                    e.getMessage());
        });
        withProperty("samstream.device", "gpu", () -> {
            ConfigException e = assertThrows(ConfigException.class, ConfigLoader::load);
            assertTrue(e.getMessage().contains("samstream.device") && e.getMessage().contains("gpu"), e.getMessage());
        });
        withProperty("samstream.device", "cpu", () -> assertEquals(Device.CPU, ConfigLoader.load().device()));
    }

    /** samstream.model.precision: bf16 by default, fp8 from a file or -D; a wrong value names the key and the choices. */
    @Test
    void precisionIsBf16UnlessFp8IsAsked() throws IOException {
        assertEquals(ModelPrecision.BF16, ConfigLoader.load().cuda().precision());
        assertEquals(new CudaSettings(true, true, ModelPrecision.FP8),
                ConfigLoader.load(write("samstream.model.precision = FP8")).cuda());
        withProperty("samstream.model.precision", "fp8",
                () -> assertEquals(ModelPrecision.FP8, ConfigLoader.load().cuda().precision()));
        Path f = write("samstream.model.precision = int8");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().startsWith(f + ": samstream.model.precision: unknown precision 'int8'"), e.getMessage());
        assertTrue(e.getMessage().contains("expected bf16 or fp8"), e.getMessage());
    }

    /** No sparse FP8 kernel yet: fp8 with 2:4 is refused at load, naming both keys; fp8 with none is fine. */
    @Test
    void fp8WithTwoFourSparsityIsRefused() throws IOException {
        Path f = write("samstream.model { precision = fp8, sparsity = \"2:4\" }");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.model.precision = fp8") && e.getMessage().contains(
                "samstream.model.sparsity = 2:4"), e.getMessage());
        SamstreamConfig ok = ConfigLoader.load(write("samstream.model { precision = fp8, sparsity = none }"));
        assertEquals(ModelPrecision.FP8, ok.cuda().precision());
        assertFalse(ok.sparsity().twoFour());
    }

    /** The CUDA backend's options are keys of samstream.cuda: in a file or as -D overrides, checked like any other. */
    @Test
    void theCudaSectionIsKeysOverridableBySystemProperties() throws IOException {
        assertEquals(CudaSettings.DEFAULTS, ConfigLoader.load().cuda());
        assertEquals(new CudaSettings(true, false), ConfigLoader.load(write("samstream.cuda.decoder-graphs = off")).cuda());
        withProperty("samstream.cuda.graphs", "false",
                () -> assertEquals(new CudaSettings(false, true), ConfigLoader.load().cuda()));
        withProperty("samstream.cuda.graphs", "maybe", () -> {
            ConfigException e = assertThrows(ConfigException.class, ConfigLoader::load);
            assertTrue(e.getMessage().contains("samstream.cuda.graphs"), e.getMessage());
        });
        // A switch of the kernel variants that were removed is an unknown key now, from a file and from -D.
        withProperty("samstream.cuda.gemmPipeline", "tmas", () -> {
            ConfigException e = assertThrows(ConfigException.class, ConfigLoader::load);
            assertTrue(e.getMessage().contains("-Dsamstream.cuda.gemmPipeline (a system property): unknown key"),
                    e.getMessage());
        });
        Path file = write("samstream.cuda.gemmPipeline = tmas");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(file));
        assertTrue(e.getMessage().contains(file + ": unknown key samstream.cuda.gemmPipeline"), e.getMessage());
    }

    /** Every {@code -Dsamstream.KEY=} that reference.conf, the README and docs/ show is a key, or a JVM switch. */
    @Test
    void theDocumentedSystemPropertiesExist() throws IOException {
        StringBuilder docs = new StringBuilder(new String(
                ConfigLoader.class.getResourceAsStream("/reference.conf").readAllBytes(),
                java.nio.charset.StandardCharsets.UTF_8));
        RepoDocs.allPages().forEach(page -> docs.append('\n').append(RepoDocs.read(page)));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("-Dsamstream\\.([A-Za-z0-9_.-]+)=").matcher(docs);
        int seen = 0;
        while (m.find()) {
            String key = m.group(1);
            boolean known = ConfigFactory.parseResources("reference.conf").hasPathOrNull("samstream." + key);
            assertTrue(known || ConfigLoader.isJvmSwitch(key), "-Dsamstream." + key
                    + " is shown in the docs but is no key");
            seen++;
        }
        assertTrue(seen >= 3, "found only " + seen);
    }

    /** Found by fuzzing: a NUL in a path was an InvalidPathException, a newline in a stream id a two-line error. */
    @Test
    void pathsTheOsCannotNameAndControlCharactersAreOneLineConfigErrors() throws IOException {
        Path f = write("samstream.sinks.jsonl-dir = \"out/a\\u0000b\"");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.sinks.jsonl-dir: not a valid path"), e.getMessage());
        Path g = write("samstream.model.checkpoint = \"m\\u0000.pth\"");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(g));
        assertTrue(e.getMessage().contains("samstream.model.checkpoint: not a valid path"), e.getMessage());

        e = assertThrows(ConfigException.class, () -> StreamSpecs.fromJson("cam\n1", "{\"location\": \"x\", \"bogus\": 1}",
                ConfigLoader.load().streamDefaults()));
        assertTrue(e.getMessage().startsWith("stream definition 'cam\\n1': unknown key 'bogus'"), e.getMessage());
    }

    /** Found by fuzzing: merging a list into reference.conf's string failed in resolve(), uncaught. */
    @Test
    void aValueThatCannotBeMergedIsAConfigError() throws IOException {
        Path f = write("samstream.kafka.bootstrap-servers += \"kafka-1:9092\"");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().startsWith(f + ": "), e.getMessage());
        Path g = write("samstream = \"x\""); // the root itself of the wrong type
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(g));
        assertTrue(e.getMessage().contains("samstream has type STRING rather than OBJECT"), e.getMessage());
    }

    /** Fuzzing found it (bench/results/fuzzing.md): Typesafe Config's tokenizer fails on a signed escape. */
    @Test
    void aUnicodeEscapeWithASignIsAConfigErrorInAFileAndAStreamDefinition() throws IOException {
        String escape = "\\" + "u-cde"; // a backslash-u with a sign: Integer.parseInt takes it, toChars does not
        Path f = write("samstream.sinks.jsonl-dir = \"" + escape + "\"");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().startsWith(f + ": a bad escape ("), e.getMessage());
        e = assertThrows(ConfigException.class, () -> StreamSpecs.fromJson("cam-1",
                "{\"location\": \"" + escape + "\"}", ConfigLoader.load().streamDefaults()));
        assertEquals("stream definition 'cam-1': not a JSON object: a bad escape (Not a valid Unicode code point:"
                + " 0xFFFFF322)", e.getMessage());
    }

    private static void withProperty(String key, String value, Runnable check) {
        System.setProperty(key, value);
        ConfigFactory.invalidateCaches();
        try {
            check.run();
        } finally {
            System.clearProperty(key);
            ConfigFactory.invalidateCaches();
        }
    }

    private Path write(String text) throws IOException {
        Path f = Files.createTempFile(dir, "app", ".conf");
        Files.writeString(f, text);
        return f;
    }

    @Test
    void kafkaDefaultsStartTheEmbeddedBroker() {
        KafkaSettings k = ConfigLoader.load().kafka();
        assertTrue(k.embeddedBroker());
        assertEquals(Optional.empty(), k.bootstrapServers());
        assertEquals("samstream.masks", k.masksTopic());
        assertEquals("samstream.prompts", k.promptsTopic());
        assertEquals(KafkaSettings.Compression.LZ4, k.compression());
        assertEquals("lz4", k.compression().kafkaName());
        assertEquals(Map.of(), k.producer());
    }

    @Test
    void kafkaFileOverridesDefaults() throws IOException {
        Path f = write("samstream.kafka { bootstrap-servers = \" kafka-1:9092,10.0.0.2:9093 \", masks-topic = masks,"
                + " prompts-topic = prompts, compression = ZSTD }");
        KafkaSettings k = ConfigLoader.load(f).kafka();
        assertEquals(Optional.of("kafka-1:9092,10.0.0.2:9093"), k.bootstrapServers());
        assertFalse(k.embeddedBroker());
        assertEquals("masks", k.masksTopic());
        assertEquals("prompts", k.promptsTopic());
        assertEquals(KafkaSettings.Compression.ZSTD, k.compression());
    }

    @Test
    void producerPropertiesPassThroughNestedOrQuoted() throws IOException {
        Path f = write("samstream.kafka.producer { linger.ms = 20, \"batch.size\" = 262144,"
                + " enable.idempotence = true, interceptor.classes = [a.B, c.D], client.id = \"engine-1\" }");
        assertEquals(Map.of("linger.ms", "20", "batch.size", "262144", "enable.idempotence", "true",
                "interceptor.classes", "a.B,c.D", "client.id", "engine-1"), ConfigLoader.load(f).kafka().producer());
    }

    @Test
    void producerPropertiesFromSystemPropertiesStyleOverrides() {
        Properties p = new Properties();
        p.setProperty("samstream.kafka.producer.linger.ms", "7");
        SamstreamConfig c = ConfigLoader.validate(
                ConfigFactory.parseProperties(p).withFallback(ConfigFactory.defaultReference()).resolve(), "-D");
        assertEquals(Map.of("linger.ms", "7"), c.kafka().producer());
    }

    @Test
    void producerPropertiesWithTheirOwnKeyAreRejected() throws IOException {
        Path f = write("samstream.kafka.producer.compression.type = gzip");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.kafka.producer.compression.type"), e.getMessage());
        assertTrue(e.getMessage().contains("samstream.kafka.compression"), e.getMessage());

        Path g = write("samstream.kafka.producer { \"bootstrap.servers\" = \"x:1\" }");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(g));
        assertTrue(e.getMessage().contains("samstream.kafka.bootstrap-servers"), e.getMessage());
    }

    @Test
    void clusterSectionIsReadAndCheckedNamingTheKey() throws IOException {
        ClusterSettings off = ConfigLoader.load().cluster();
        assertFalse(off.enabled());
        assertEquals("samstream", off.group());
        assertEquals(12, off.partitions());
        assertEquals("samstream.state", off.stateTopic());
        assertEquals(25, off.stateEveryFrames());
        assertEquals(java.time.Duration.ofSeconds(10), off.sessionTimeout());

        Path f = write("samstream { streams-topic = s, cluster { enabled = on, group = g, instance-id = e-1,"
                + " partitions = 6, state-topic = st, state-every-frames = 5, session-timeout = 3s } }");
        ClusterSettings c = ConfigLoader.load(f).cluster();
        assertEquals(new ClusterSettings(true, "g", Optional.of("e-1"), 6, "st", 5, java.time.Duration.ofSeconds(3)), c);

        Path g = write("samstream.cluster.enabled = on");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(g));
        assertTrue(e.getMessage().contains("samstream.cluster.enabled needs samstream.streams-topic"), e.getMessage());
        Path h = write("samstream { streams-topic = s, cluster { enabled = on, state-topic = s } }");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(h));
        assertTrue(e.getMessage().contains("samstream.cluster.state-topic must differ"), e.getMessage());
        Path i = write("samstream.cluster.partitions = 0");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(i));
        assertTrue(e.getMessage().contains("samstream.cluster.partitions must be 1-10000"), e.getMessage());
        Path j = write("samstream.cluster.instance-id = \"a b\"");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(j));
        assertTrue(e.getMessage().contains("samstream.cluster.instance-id"), e.getMessage());
    }

    @Test
    void clientPropertiesPassThroughAndThoseSetElsewhereAreRejected() throws IOException {
        Path f = write("samstream.kafka { bootstrap-servers = \"k:9093\", client { security.protocol = SASL_SSL,"
                + " sasl.mechanism = PLAIN, \"ssl.truststore.location\" = /etc/t.p12 } }");
        assertEquals(Map.of("security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN",
                "ssl.truststore.location", "/etc/t.p12"), ConfigLoader.load(f).kafka().client());
        assertEquals(Map.of(), ConfigLoader.load().kafka().client());

        Path g = write("samstream.kafka.client.group.id = mine");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(g));
        assertTrue(e.getMessage().contains("samstream.kafka.client.group.id is not allowed"), e.getMessage());
        assertTrue(e.getMessage().contains("samstream.cluster.group"), e.getMessage());

        Path h = write("samstream.kafka.client.security.protocol = SSL");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(h));
        assertTrue(e.getMessage().contains("needs samstream.kafka.bootstrap-servers"), e.getMessage());
    }

    @Test
    void producerMustBeASection() throws IOException {
        Path f = write("samstream.kafka.producer = 5");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("kafka.producer"), e.getMessage());
    }

    @Test
    void unknownKafkaKeyIsNamed() throws IOException {
        Path f = write("samstream.kafka.mask-topic = x");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("unknown key samstream.kafka.mask-topic"), e.getMessage());
    }

    @Test
    void badCompressionNamesKeyAndChoices() throws IOException {
        Path f = write("samstream.kafka.compression = brotli");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.kafka.compression"), e.getMessage());
        assertTrue(e.getMessage().contains("lz4 or zstd"), e.getMessage());
    }

    @Test
    void badTopicsAreNamed() throws IOException {
        Path f = write("samstream.kafka.masks-topic = \"masks of cam 1\"");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.kafka.masks-topic"), e.getMessage());

        Path g = write("samstream.kafka.prompts-topic = \"\"");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(g));
        assertTrue(e.getMessage().contains("samstream.kafka.prompts-topic"), e.getMessage());

        Path h = write("samstream.kafka { masks-topic = t, prompts-topic = t }");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(h));
        assertTrue(e.getMessage().contains("must differ"), e.getMessage());
    }

    @Test
    void promptsDeadLetterTopicIsOptionalAndDistinct() throws IOException {
        assertEquals(Optional.empty(), ConfigLoader.load().kafka().promptsDeadLetterTopic());
        Path f = write("samstream.kafka.prompts-dead-letter-topic = prompts-dlt");
        assertEquals(Optional.of("prompts-dlt"), ConfigLoader.load(f).kafka().promptsDeadLetterTopic());
        for (String t : new String[] {"samstream.prompts", "samstream.masks"}) {
            Path g = write("samstream.kafka.prompts-dead-letter-topic = " + t);
            ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(g), t);
            assertTrue(e.getMessage().contains("prompts-dead-letter-topic must differ"), e.getMessage());
        }
        Path h = write("samstream.kafka.prompts-dead-letter-topic = \"bad topic\"");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(h));
        assertTrue(e.getMessage().contains("samstream.kafka.prompts-dead-letter-topic"), e.getMessage());
    }

    @Test
    void badBootstrapServersAreNamed() throws IOException {
        for (String servers : new String[] {"localhost", "kafka:9092,", "kafka:99999", "kafka:port"}) {
            Path f = write("samstream.kafka.bootstrap-servers = \"" + servers + "\"");
            ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f), servers);
            assertTrue(e.getMessage().contains("samstream.kafka.bootstrap-servers"), e.getMessage());
        }
        Path ipv6 = write("samstream.kafka.bootstrap-servers = \"[::1]:9092\"");
        assertEquals(Optional.of("[::1]:9092"), ConfigLoader.load(ipv6).kafka().bootstrapServers());
    }

    @Test
    void sparsityDefaultsToDenseAndParsesTwoFour() throws IOException {
        assertEquals(ModelSparsity.NONE, ConfigLoader.load().sparsity());
        Path f = write("samstream.model { sparsity = \"2:4\", sparse-layers = mlp }");
        assertEquals(new ModelSparsity(true, ModelSparsity.Layers.MLP), ConfigLoader.load(f).sparsity());
        Path g = write("samstream.model.sparsity = \"2:4\"");
        assertEquals(new ModelSparsity(true, ModelSparsity.Layers.ALL), ConfigLoader.load(g).sparsity());
    }

    @Test
    void badSparsityValuesNameTheirKey() throws IOException {
        Path f = write("samstream.model.sparsity = \"4:8\"");
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        assertTrue(e.getMessage().contains("samstream.model.sparsity"), e.getMessage());
        assertTrue(e.getMessage().contains("none or 2:4"), e.getMessage());
        Path g = write("samstream.model.sparse-layers = attention");
        e = assertThrows(ConfigException.class, () -> ConfigLoader.load(g));
        assertTrue(e.getMessage().contains("samstream.model.sparse-layers"), e.getMessage());
        assertTrue(e.getMessage().contains("all or mlp"), e.getMessage());
    }
}
