package io.samstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.bench.track.Clip;
import io.samstream.bench.track.HardClips;
import io.samstream.bench.track.TrackClips;
import io.samstream.bench.track.TrackHarness.Mode;
import java.util.List;
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

    private static List<String> names(List<Clip> clips) {
        return clips.stream().map(Clip::name).toList();
    }

    @Test
    void withoutArgumentsTheDefaultFourAsBefore() {
        assertEquals(List.copyOf(TrackClips.all().keySet()), names(TrackEval.selectClips(null, null)));
        assertEquals(List.of("constant-motion", "occlusion", "enter-leave", "camera-shake"),
                names(TrackEval.selectClips(List.of("default"), null)));
        assertEquals(List.of("occlusion"), names(TrackEval.selectClips(null, List.of("occlusion"))));
    }

    @Test
    void familiesByNameOrAllHard() {
        assertEquals(List.copyOf(HardClips.all().keySet()), names(TrackEval.selectClips(List.of("hard"), null)));
        assertEquals(List.of("leave-return-noise", "leave-return-stripes", "constant-motion", "occlusion",
                "enter-leave", "camera-shake"), names(TrackEval.selectClips(List.of("leave-return", "default"), null)));
        // --clips takes names from both sets; with --families, only from those families.
        assertEquals(List.of("scene-cut-noise-stripes", "occlusion"),
                names(TrackEval.selectClips(null, List.of("scene-cut-noise-stripes", "occlusion"))));
        assertEquals(List.of("same-colour-mixed"),
                names(TrackEval.selectClips(List.of("same-colour"), List.of("same-colour-mixed"))));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TrackEval.selectClips(List.of("same-colour"), List.of("occlusion")));
        assertTrue(e.getMessage().contains("unknown clip 'occlusion'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> TrackEval.selectClips(List.of("hardest"), null));
    }
}
