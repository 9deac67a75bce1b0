package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ConfigException;
import io.samstream.config.ConfigLoader;
import io.samstream.config.SamstreamConfig;
import io.samstream.config.TrackingMode;
import io.samstream.gpu.ModelCheckpoints.Family;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link TrackingModes}: the mode a checkpoint's family gets, SAM 3's concept mode among them. */
class TrackingModesTest {
    static final Path SAM3 = Path.of("sam3.pt");
    @TempDir
    Path dir;

    private SamstreamConfig config(String text) throws IOException {
        return ConfigLoader.load(Files.writeString(dir.resolve("c" + text.hashCode() + ".conf"), text));
    }

    @Test
    void aSam3CheckpointTracksConceptsAndRefusesWhatItCannotRun() throws IOException {
        assertEquals(TrackingMode.CONCEPT, TrackingModes.resolve(config("samstream.device = cpu"), Family.SAM3, SAM3));
        assertEquals(TrackingMode.CONCEPT, TrackingModes.resolve(config("samstream.tracking.mode = concept"),
                Family.SAM3, SAM3));
        assertRefused("samstream.tracking.mode = kalman", Family.SAM3, "samstream.tracking.mode = kalman: sam3.pt is"
                + " a SAM 3 checkpoint");
        assertRefused("samstream.tracking.enabled = off", Family.SAM3, "samstream.tracking.enabled = off");
        assertEquals(TrackingMode.CONCEPT, TrackingModes.resolve(config("samstream.device = cuda"), Family.SAM3, SAM3));
        assertRefused("samstream.tracking.mode = concept", Family.SAM2, "mode = concept needs a SAM 3 checkpoint");
        assertRefused("samstream.tracking.mode = concept", Family.SAM, "is a SAM checkpoint");
        assertEquals(TrackingMode.KALMAN, TrackingModes.resolve(config(""), Family.SAM, Path.of("sam.pth")));
        assertEquals(TrackingMode.MEMORY, TrackingModes.resolve(config(""), Family.SAM2, Path.of("sam2.pt")));
    }

    private void assertRefused(String conf, Family family, String expected) throws IOException {
        SamstreamConfig c = config(conf);
        ConfigException e = assertThrows(ConfigException.class, () -> TrackingModes.resolve(c, family, SAM3));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
