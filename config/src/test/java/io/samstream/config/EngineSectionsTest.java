package io.samstream.config;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EngineSectionsTest {
    @TempDir
    Path dir;

    @Test
    void defaults() {
        SamstreamConfig c = ConfigLoader.load();
        assertTrue(c.streams().isEmpty());
        assertEquals(new EngineSettings.Batching(8, Duration.ofMillis(20)), c.batching());
        assertEquals(2, c.pipeline().inFlight());
        assertTrue(c.sinks().kafka());
        assertTrue(c.sinks().jsonlDir().isEmpty());
        assertTrue(c.metrics().enabled());
        assertEquals("127.0.0.1", c.http().host());
        assertTrue(c.streamsTopic().isEmpty());
        assertEquals(2, c.streamDefaults().prompts().grid());
        assertEquals(new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30), c.tracking());
        assertEquals(new EngineSettings.Discovery(false, 30, 16, 0.86, 0.92, 0.7, 64, 0.5), c.discovery());
    }

    @Test
    void trackingAndDiscovery() throws IOException {
        SamstreamConfig c = ConfigLoader.load(write("samstream { tracking { lost-after = 3, min-predicted-iou = 0.7,"
                + " min-stability = 0.8, merge-iou = 0.9, hidden-lost-after = 12 }\n"
                + " discovery { enabled = on, interval = 10, points-per-side = 8, min-area = 100 } }"));
        assertEquals(new EngineSettings.Tracking(true, 3, 0.7, 0.8, 0.9, 12), c.tracking());
        assertEquals(new EngineSettings.Discovery(true, 10, 8, 0.86, 0.92, 0.7, 100, 0.5), c.discovery());
        assertFalse(ConfigLoader.load(write("samstream.tracking.enabled = off")).tracking().enabled());
        assertTrue(c.tracking().cameraMotion(), "camera motion is on by default");
        assertFalse(ConfigLoader.load(write("samstream.tracking.camera-motion = off")).tracking().cameraMotion());
        assertThrows(ConfigException.class, () -> ConfigLoader.load(write("samstream.tracking.camera-motion = 3")));
        c = ConfigLoader.load(write("samstream.tracking { min-appearance = -1, scene-cut-similarity = 0, reid-window = 0,"
                + " reid-appearance = 0.9 }"));
        assertEquals(new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30, -1, 0, 0, 0.9), c.tracking());
        assertEquals(EngineSettings.Tracking.DEFAULT_REID_SEARCH, c.tracking().reidSearch(), "reid-search's default");
        assertEquals(EngineSettings.Tracking.DEFAULT_REID_SEARCH_SPEED, c.tracking().reidSearchSpeed());
        c = ConfigLoader.load(write("samstream.tracking { reid-search = 0, reid-search-speed = 0.25 }"));
        assertEquals(0, c.tracking().reidSearch(), "off");
        assertEquals(0.25, c.tracking().reidSearchSpeed());
        assertEquals(1.5, c.tracking().withReidSearch(1.5).reidSearch());
        assertEquals(EngineSettings.Tracking.DEFAULT_MEMORY_FORGET_AFTER, c.tracking().memoryForgetAfter(),
                "memory-forget-after's default");
        assertEquals(EngineSettings.Tracking.DEFAULT_MEMORY_FOUND_AFTER, c.tracking().memoryFoundAfter());
        c = ConfigLoader.load(write("samstream.tracking { memory-forget-after = 0, memory-found-after = 7 }"));
        assertEquals(0, c.tracking().memoryForgetAfter(), "0: dropped when lost (found-after then unused)");
        assertEquals(7, c.tracking().memoryFoundAfter());
        assertEquals(120, c.tracking().withMemoryRefind(120, 4).memoryForgetAfter());
        for (String bad : List.of("min-appearance = 1.5", "scene-cut-similarity = -0.1", "reid-window = -1",
                "reid-appearance = -2", "reid-search = -1", "reid-search-speed = -0.1", "reid-search = 101")) {
            ConfigException e = assertThrows(ConfigException.class,
                    () -> ConfigLoader.load(write("samstream.tracking." + bad)), bad);
            assertTrue(e.getMessage().contains("samstream.tracking." + bad.substring(0, bad.indexOf(' '))),
                    e.getMessage());
        }
    }

    @Test
    void trackingModeIsAutoUnlessSetAndUnknownModesAreRefused() throws IOException {
        assertEquals(TrackingMode.AUTO, ConfigLoader.load(write("samstream {}")).tracking().mode());
        assertEquals(TrackingMode.MEMORY, ConfigLoader.load(write("samstream.tracking.mode = memory")).tracking().mode());
        assertEquals(TrackingMode.KALMAN, ConfigLoader.load(write("samstream.tracking.mode = KALMAN")).tracking().mode());
        assertEquals(TrackingMode.CONCEPT, ConfigLoader.load(write("samstream.tracking.mode = concept")).tracking()
                .mode());
        assertMessage("samstream.tracking.mode = sam2", "samstream.tracking.mode",
                "unknown tracking mode 'sam2' (expected auto, memory, kalman or concept)");
        assertMessage("samstream.tracking.modes = memory", "unknown key samstream.tracking.modes");
    }

    @Test
    void streamsWithPromptsAndDefaults() throws IOException {
        SamstreamConfig c = ConfigLoader.load(write("""
                samstream {
                  stream-defaults.decoder = cpu
                  streams = [
                    { id = cam-1, location = "rtsp://127.0.0.1:8554/cam", prompts {
                        objects = [ { id = 1, points = [[10, 20], [30, 40, 0]] }, { id = 2, box = [1, 2, 30, 40] } ] } }
                    { id = clip, location = "/data/clip.mp4", live = true, prompts.grid = 3 }
                    { id = plain, location = "/data/b.mkv" }
                  ]
                  batching { max-batch = 4, max-latency = 5ms }
                  streams-topic = samstream.streams
                }"""));
        List<StreamSpec> s = c.streams();
        assertEquals(3, s.size());
        assertTrue(s.get(0).isLive());
        assertEquals(StreamSpec.Decoder.CPU, s.get(0).decoder());
        PromptSpec.ObjectPrompt o1 = s.get(0).prompts().objects().get(0);
        assertEquals(1, o1.label(0));
        assertEquals(0, o1.label(1));
        assertArrayEquals(new double[] {1, 2, 30, 40}, s.get(0).prompts().objects().get(1).box());
        assertEquals(0, s.get(0).prompts().grid(), "own prompts replace the defaults whole");
        assertTrue(s.get(1).isLive());
        assertEquals(9, s.get(1).prompts().resolve(90, 90).size());
        assertEquals(PromptSpec.GRID_ID_BASE + 4, s.get(1).prompts().resolve(90, 90).get(4).id());
        assertArrayEquals(new double[] {45, 45, 1}, s.get(1).prompts().resolve(90, 90).get(4).points()[0]);
        assertFalse(s.get(2).isLive());
        assertEquals(2, s.get(2).prompts().grid());
        assertEquals(4, c.batching().maxBatch());
        assertEquals("samstream.streams", c.streamsTopic().orElseThrow());
    }

    @Test
    void errorsNameTheStreamAndKey() throws IOException {
        assertMessage("samstream.streams = [ { id = a, location = x, prompt.grid = 2 } ]",
                "samstream.streams[0]", "unknown key 'prompt'");
        assertMessage("samstream.streams = [ { id = a, location = x }, { id = a, location = y } ]",
                "samstream.streams[1]", "used twice");
        assertMessage("samstream.streams = [ { location = x } ]", "samstream.streams[0].id is missing");
        assertMessage("samstream.streams = [ { id = a, location = x, live = sometimes } ]", "(a).live");
        assertMessage("samstream.streams = [ { id = a, location = x, prompts.objects = [ { id = 1, box = [1, 2, 3] } ] } ]",
                "(a).prompts.objects[0]", "box");
        assertMessage("samstream.streams = [ { id = \"a b\", location = x } ]", "stream id 'a b'");
        assertMessage("samstream.batching.max-batch = 0", "samstream.batching.max-batch");
        assertMessage("samstream.batching.max-latency = soon", "samstream.batching.max-latency");
        assertMessage("samstream.reconnect { min-backoff = 10s, max-backoff = 1s }", "samstream.reconnect.min-backoff");
        assertMessage("samstream.http.port = 70000", "samstream.http.port");
        assertMessage("samstream.metrics.port = 9464", "unknown key samstream.metrics.port");
        assertMessage("samstream.streams-topic = \"bad topic\"", "samstream.streams-topic");
        assertMessage("samstream.tracking.lost-after = 0", "samstream.tracking.lost-after");
        assertMessage("samstream.tracking.min-predicted-iou = 1.5", "samstream.tracking.min-predicted-iou", "[0, 1]");
        assertMessage("samstream.tracking.merge-iou = -0.1", "samstream.tracking.merge-iou");
        assertMessage("samstream.tracking { lost-after = 8, hidden-lost-after = 6 }",
                "samstream.tracking.hidden-lost-after", "samstream.tracking.lost-after (8)");
        assertMessage("samstream.tracking.lost-afterr = 3", "unknown key samstream.tracking.lost-afterr");
        assertMessage("samstream.tracking.memory-forget-after = -1", "samstream.tracking.memory-forget-after",
                "[0, 100000]");
        assertMessage("samstream.tracking.memory-forget-after = soon", "samstream.tracking.memory-forget-after");
        assertMessage("samstream.tracking.memory-found-after = 0", "samstream.tracking.memory-found-after", "1 to");
        assertMessage("samstream.tracking { memory-forget-after = 4, memory-found-after = 5 }",
                "samstream.tracking.memory-found-after (5)", "samstream.tracking.memory-forget-after (4)");
        assertMessage("samstream.discovery.interval = 0", "samstream.discovery.interval");
        assertMessage("samstream.discovery.nms-iou = 2", "samstream.discovery.nms-iou");
        assertMessage("samstream { tracking.enabled = off, discovery.enabled = on }", "samstream.discovery.enabled",
                "samstream.tracking.enabled");
        assertMessage("samstream.streams = [ { id = a, location = x, prompts.objects = [ { id = 1000000,"
                + " points = [[1, 2]] } ] } ]", "(a).prompts.objects[0]", "discovered");
    }

    @Test
    void streamDefinitionFromJson() {
        StreamDefaults d = ConfigLoader.load().streamDefaults();
        StreamSpec s = StreamSpecs.fromJson("cam-2", "{\"location\":\"http://127.0.0.1:1/x\",\"prompts\":{\"grid\":1}}", d);
        assertEquals("cam-2", s.id());
        assertTrue(s.isLive());
        assertEquals(1, s.prompts().grid());
        ConfigException e = assertThrows(ConfigException.class,
                () -> StreamSpecs.fromJson("cam-2", "{\"id\":\"other\",\"location\":\"x\"}", d));
        assertTrue(e.getMessage().contains("differs from the record key"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> StreamSpecs.fromJson("k", "not json", d));
        assertTrue(e.getMessage().contains("stream definition 'k'"), e.getMessage());
    }

    private void assertMessage(String conf, String... parts) throws IOException {
        Path f = write(conf);
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(f));
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), e.getMessage() + " should contain " + p);
        }
    }

    private Path write(String text) throws IOException {
        Path f = Files.createTempFile(dir, "app", ".conf");
        Files.writeString(f, text);
        return f;
    }
}
