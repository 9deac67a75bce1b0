package io.samstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.bench.track.ResultsTsv;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TrackModesTest {
    private static Map<String, TrackModes.ClipFigures> rows(String... lines) {
        return TrackModes.boxRows(ResultsTsv.parse(ResultsTsv.HEADER + "\n" + String.join("\n", lines) + "\n", "t"));
    }

    private static final String KALMAN_OCCLUSION = "box\tocclusion\t4\t0.9000\t0.9500\t0.9250\t0\t0\t4\t4\t1.0\t48\t10";
    private static final String KALMAN_CONTACT = "box-hard\tshake-contact-noise\t3\t0.9\t0.9\t0.9000\t0\t0\t2\t2\t1.0\t60\t9";
    private static final String KALMAN_CONTACT2 = "box-hard\tshake-contact-stripes\t1\t0.5\t0.5\t0.5000\t2\t0\t1\t1\t1.0\t60\t9";

    @Test
    void familiesAverageOverObjectsAndTheVerdictNamesTheWorseFamily() {
        var kalman = rows(KALMAN_OCCLUSION, KALMAN_CONTACT, KALMAN_CONTACT2,
                "box\tall\t8\t0.8\t0.8\t0.8000\t2\t0\t7\t7\t1.0\t168\t28");
        // memory: occlusion 0.95 > 0.925; contact (3 x 0.8 + 1 x 0.9) / 4 = 0.825 > (3 x 0.9 + 1 x 0.5) / 4 = 0.8
        var memory = rows("box\tocclusion\t4\t0.95\t0.95\t0.9500\t0\t0\t4\t4\t1.0\t48\t40",
                "box\tshake-contact-noise\t3\t0.8\t0.8\t0.8000\t1\t0\t2\t2\t1.0\t60\t30",
                "box\tshake-contact-stripes\t1\t0.9\t0.9\t0.9000\t0\t0\t1\t1\t1.0\t60\t30");
        assertEquals(3, kalman.size(), "the all row is left out");
        assertEquals("shake-contact", kalman.get("shake-contact-noise").family());
        assertEquals("occlusion", kalman.get("occlusion").family());
        String md = TrackModes.report(kalman, memory);
        assertTrue(md.contains("| shake-contact | 2 | 4 | 0.800 | 0.825 | +0.025 | yes |"), md);
        assertTrue(md.contains("| occlusion | occlusion | 4 | 0.925 | 0.950 | +0.025 | 0 / 0 |"), md);
        assertTrue(md.contains("**Memory mode is at least as good** (J&F) on occlusion, shake-contact."), md);

        var worse = rows("box\tocclusion\t4\t0.5\t0.5\t0.5000\t3\t0\t4\t4\t1.0\t48\t40",
                "box\tshake-contact-noise\t3\t0.8\t0.8\t0.8000\t1\t0\t2\t2\t1.0\t60\t30");
        md = TrackModes.report(kalman, worse);
        assertTrue(md.contains("| occlusion | 1 | 4 | 0.925 | 0.500 | -0.425 | no |"), md);
        assertTrue(md.contains("| shake-contact | 1 | 3 | 0.900 | 0.800 | -0.100 | no |"), md);
        assertTrue(md.contains("**Memory mode is worse** (J&F) on occlusion, shake-contact"), md);
        assertTrue(md.contains("In one run only (left out): shake-contact-stripes (kalman only)."), md);
    }

    @Test
    void anUnknownClipIsNamed() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> rows("box\tno-such-clip\t1\t0.5\t0.5\t0.5\t0\t0\t1\t1\t1.0\t10\t1"));
        assertTrue(e.getMessage().contains("no-such-clip"), e.getMessage());
    }
}
