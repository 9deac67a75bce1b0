package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.PromptSpec;
import io.samstream.config.StreamSpec;
import io.samstream.connectors.video.SourceSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

class VideoConnectorsTest {
    @Test
    void gpuFramesAreDecodedOnTheStreamsGpu() {
        StreamSpec spec = new StreamSpec("cam", "/v/a.mp4", StreamSpec.Live.FALSE, StreamSpec.Decoder.AUTO,
                new PromptSpec(List.of(), 0));
        SourceSpec onGpu1 = VideoConnectors.sourceSpec(spec, true, 1);
        assertTrue(onGpu1.gpuFrames());
        assertEquals("1", onGpu1.options().get("decoder.gpu"), "NVDEC and its frames on GPU 1");
        assertEquals("false", onGpu1.options().get("live"));
        SourceSpec host = VideoConnectors.sourceSpec(spec, false, 1);
        assertFalse(host.gpuFrames());
        assertFalse(host.options().containsKey("decoder.gpu"));
    }
}
