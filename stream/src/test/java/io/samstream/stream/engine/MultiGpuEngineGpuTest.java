package io.samstream.stream.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.samstream.config.Device;
import io.samstream.config.GpuSelection;
import io.samstream.config.ModelSparsity;
import io.samstream.config.PromptSpec;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.kafka.MaskRecord;
import io.samstream.connectors.video.FfmpegFrameSource;
import io.samstream.connectors.video.FrameSource;
import io.samstream.gpu.SamModels;
import io.samstream.gpu.cuda.CudaAvailability;
import io.samstream.stream.app.VideoConnectors;
import io.samstream.testkit.TestModels;
import io.samstream.testkit.connectors.TestClips;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine on every GPU of the machine ({@code samstream.gpus = all}) against GPU 0 alone ({@code [0]}): the
 * same tracks (object and lost ids, masks within {@link CudaEngineGpuTest}'s bounds); with two or more GPUs the
 * streams spread over all of them and every GPU encodes frames. And H.264 files decoded by NVDEC with their
 * frames left on the GPU: each stream's frames are decoded on the GPU its backend runs on (decoder.gpu) and every
 * stream publishes every frame. On one GPU both runs take the same path (what they check is then that
 * {@code all} finds the GPU). Skips where no GPU is usable (CI), saying why.
 */
@Tag("gpu")
@Timeout(900)
class MultiGpuEngineGpuTest {
    @Test
    void everyGpuTracksAsGpuZeroAlone() throws Exception {
        CudaAvailability a = CudaAvailability.probe();
        Assumptions.assumeTrue(a.available(), () -> "GPU tests skipped: " + a.reason());
        int visible = CudaAvailability.deviceCount();
        int streams = Math.max(CudaEngineGpuTest.STREAMS, 2 * visible);
        Map<String, List<MaskRecord>> zero;
        List<SamModels.DeviceBackend> one = open(GpuSelection.of(0));
        try {
            assertEquals(List.of(0), one.stream().map(SamModels.DeviceBackend::gpu).toList());
            zero = CudaEngineGpuTest.run(lanes(one), streams, EngineMetrics.inMemory(), new HashMap<>());
        } finally {
            one.forEach(b -> b.backend().close());
        }
        EngineMetrics metrics = EngineMetrics.inMemory();
        Map<String, String> placed = new HashMap<>();
        Map<String, List<MaskRecord>> all;
        List<SamModels.DeviceBackend> every = open(GpuSelection.ALL);
        List<String> gpus = every.stream().map(SamModels.DeviceBackend::label).toList();
        try {
            System.out.printf("samstream.gpus = all: %d of %d visible GPUs (%s)%n", every.size(), visible, gpus);
            all = CudaEngineGpuTest.run(lanes(every), streams, metrics, placed);
        } finally {
            every.forEach(b -> b.backend().close());
        }
        System.out.println("streams by GPU: " + placed);
        CudaEngineGpuTest.assertTracksAlike(zero, all, "gpus=all", "gpus=[0]");
        MeterRegistry r = metrics.registry();
        for (String g : gpus) {
            long placedHere = placed.values().stream().filter(g::equals).count();
            double frames = r.get("samstream.batch.size").tag("gpu", g).summary().totalAmount();
            System.out.printf("GPU %s: %d streams, %.0f frames encoded%n", g, placedHere, frames);
            // Least loaded at start: the streams spread evenly, and each GPU encodes exactly its streams' frames.
            assertTrue(Math.abs(placedHere - (double) streams / gpus.size()) < 1, "GPU " + g + ": " + placedHere
                    + " of " + streams + " streams");
            assertEquals(placedHere * CudaEngineGpuTest.FRAMES, frames, 0.0, "frames encoded on GPU " + g);
        }
    }

    @Test
    void nvdecFramesStayOnTheirStreamsGpu(@TempDir Path dir) throws Exception {
        CudaAvailability a = CudaAvailability.probe();
        Assumptions.assumeTrue(a.available(), () -> "GPU tests skipped: " + a.reason());
        int frames = 8;
        Path clip = TestClips.testPattern(dir.resolve("clip.mp4"), 640, 360, 30, frames, 5);
        List<SamModels.DeviceBackend> every = open(GpuSelection.ALL);
        // Which decoder opened each stream's frames, by the GPU the engine asked them on.
        Map<String, Set<String>> decodedOn = new ConcurrentHashMap<>();
        FrameSourceFactory videos = new FrameSourceFactory() {
            @Override
            public FrameSource open(StreamSpec spec) {
                throw new AssertionError(spec.id() + ": the CUDA backend reads GPU frames, host frames were asked for");
            }

            @Override
            public FrameSourceFactory withGpuFrames(int gpu) {
                FrameSourceFactory onGpu = VideoConnectors.sources().withGpuFrames(gpu);
                return spec -> {
                    FrameSource s = onGpu.open(spec);
                    decodedOn.computeIfAbsent(String.valueOf(gpu), k -> ConcurrentHashMap.newKeySet())
                            .add(spec.id() + " " + (s instanceof FfmpegFrameSource f ? f.decoderName()
                                    + (f.hardwareDecoding() ? " (NVDEC)" : "") : "?"));
                    return s;
                };
            }
        };
        CollectingSink sink = new CollectingSink();
        Map<String, String> placed = new HashMap<>();
        int streams = 2 * every.size();
        try (Engine engine = new Engine(TrackingEngineTest.settings(4, 2), lanes(every), videos, sink,
                EngineMetrics.inMemory())) {
            List<StreamHandle> handles = new ArrayList<>();
            for (int s = 0; s < streams; s++) {
                handles.add(engine.add(new StreamSpec("v" + s, clip.toString(), StreamSpec.Live.FALSE,
                        StreamSpec.Decoder.NVDEC, new PromptSpec(List.of(), 2))));
            }
            for (StreamHandle h : handles) {
                assertEquals(StreamHandle.State.ENDED, h.result().toCompletableFuture().get(300, TimeUnit.SECONDS)
                        .state(), h.id() + ": " + h.result().toCompletableFuture().join().error());
                placed.put(h.id(), h.gpu());
            }
        } finally {
            every.forEach(b -> b.backend().close());
        }
        System.out.println("decoders by GPU: " + decodedOn + "; streams by GPU: " + placed);
        for (int s = 0; s < streams; s++) {
            String id = "v" + s;
            assertEquals(frames, sink.of(id).size(), id + ": every frame published");
            Set<String> opened = decodedOn.getOrDefault(placed.get(id), Set.of()).stream()
                    .filter(d -> d.startsWith(id + " ")).collect(Collectors.toSet());
            assertEquals(1, opened.size(), id + " opened once, on its own GPU " + placed.get(id) + ": " + decodedOn);
            assertTrue(opened.iterator().next().endsWith("(NVDEC)"), id + ": " + opened);
        }
    }

    private static List<SamModels.DeviceBackend> open(GpuSelection gpus) {
        return SamModels.openAll(TestModels.demoSam(), Device.CUDA, gpus, 2, 4, ModelSparsity.NONE, 4);
    }

    private static List<GpuLane> lanes(List<SamModels.DeviceBackend> backends) {
        return backends.stream().map(b -> new GpuLane(b.gpu(), new Segmenter(b.backend(), "demo"), Optional.empty()))
                .toList();
    }
}
