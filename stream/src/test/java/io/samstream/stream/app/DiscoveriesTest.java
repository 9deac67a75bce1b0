package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.EngineSettings;
import io.samstream.gpu.model.SamBackend;
import io.samstream.stream.track.GeneratorDiscovery;
import io.samstream.stream.track.ObjectTracker;
import io.samstream.testkit.TestModels;
import org.junit.jupiter.api.Test;

class DiscoveriesTest {
    @Test
    void offIsNoneAndOnIsTheGeneratorWithTheConfiguredIntervalAndOverlap() {
        try (SamBackend backend = io.samstream.gpu.SamModels.open(
                TestModels.tinySam(), io.samstream.config.Device.CPU, 1)) {
            assertTrue(Discoveries.of(EngineSettings.Discovery.off(), backend).isEmpty());
            ObjectTracker.Discovery d = Discoveries.of(new EngineSettings.Discovery(true, 12, 8, 0.8, 0.9, 0.6, 10,
                    0.3), backend).orElseThrow();
            assertEquals(12, d.interval());
            assertEquals(0.3, d.newObjectMaxOverlap());
            assertTrue(d.finder() instanceof GeneratorDiscovery);
        }
    }
}
