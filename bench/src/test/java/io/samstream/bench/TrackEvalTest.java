package io.samstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.samstream.bench.track.TrackHarness.Mode;
import org.junit.jupiter.api.Test;

class TrackEvalTest {
    @Test
    void eachModeTurnsOnWhatItMeasuresAndOffWhatWouldDisturbItWhereTheBuildHasTheKeys() {
        assertEquals("samstream.tracking.enabled = on\nsamstream.discovery.enabled = off",
                TrackEval.defaultConfig(Mode.BOX, true, true));
        assertEquals("samstream.tracking.enabled = off\nsamstream.discovery.enabled = off",
                TrackEval.defaultConfig(Mode.ORACLE, true, true));
        assertEquals("samstream.discovery.enabled = on\nsamstream.tracking.enabled = on",
                TrackEval.defaultConfig(Mode.DISCOVERY, true, true));
        // Today's build: neither section exists: the baseline, and no discovery run.
        assertEquals("", TrackEval.defaultConfig(Mode.BOX, false, false));
        assertEquals("", TrackEval.defaultConfig(Mode.ORACLE, false, false));
        assertNull(TrackEval.defaultConfig(Mode.DISCOVERY, false, false));
        assertEquals("samstream.discovery.enabled = on", TrackEval.defaultConfig(Mode.DISCOVERY, false, true));
    }
}
