package io.samstream.stream.track.kalman;

import static io.samstream.stream.track.kalman.Jobs.box;
import static io.samstream.stream.track.kalman.Jobs.job;
import static io.samstream.stream.track.kalman.Jobs.rect;
import static io.samstream.stream.track.kalman.Jobs.track;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.samstream.config.EngineSettings;
import io.samstream.stream.track.MaskReadout;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link ExclusivePixels}: a followed mask holding another good mask is published without its pixels. */
class ExclusivePixelsTest {
    static final EngineSettings.Tracking SETTINGS = new EngineSettings.Tracking(true, 5, 0.5, 0.6, 0.85, 30);
    static final ExclusivePixels RULE = new ExclusivePixels("s", SETTINGS);

    static Work followed(int id, boolean[] mask) {
        return job(id, track(id, box(0, 0, 4, 4)), mask, rect(0, 0, 4, 4), box(0, 0, 4, 4));
    }

    @Test
    void theOuterMaskLosesTheInnerObjectsPixels() {
        Work outer = followed(1, rect(4, 4, 20, 20));
        Work inner = followed(2, rect(16, 8, 24, 16)); // half of it lies in the outer mask: not "mostly"
        Work small = followed(3, rect(6, 6, 10, 10)); // wholly inside the outer mask
        MaskReadout.Readout innerRead = inner.read;
        RULE.apply(0, List.of(outer, inner, small), Set.of(), Set.of());
        assertEquals(256 - 16, outer.read.summary().area(), "without the small object, which it holds");
        assertArrayEquals(new double[] {4, 4, 20, 20}, outer.read.box());
        assertSame(innerRead, inner.read, "the inner object keeps its pixels");
        assertEquals(16, small.read.summary().area());
        assertEquals(0.9f, outer.read.score(), "its predicted IoU stays");
    }

    @Test
    void onlyGoodFollowedMasksCount() {
        Work seed = job(1, null, rect(4, 4, 20, 20), null, null);
        Work small = followed(2, rect(6, 6, 10, 10));
        MaskReadout.Readout seedRead = seed.read;
        RULE.apply(0, List.of(seed, small), Set.of(), Set.of());
        assertSame(seedRead, seed.read, "a seed is the user's prompt as given");
        Work outer = followed(1, rect(4, 4, 20, 20));
        Work weak = followed(2, rect(6, 6, 10, 10));
        weak.read = Jobs.read(2, weak.mask, 0.3f); // below min-predicted-iou
        MaskReadout.Readout outerRead = outer.read;
        RULE.apply(0, List.of(outer, weak), Set.of(), Set.of());
        assertSame(outerRead, outer.read, "a bad mask is no object's");
        Work jumpedSmall = followed(2, rect(6, 6, 10, 10));
        RULE.apply(0, List.of(outer, jumpedSmall), Set.of(), Set.of(jumpedSmall));
        assertSame(outerRead, outer.read, "a jumped mask is no object's");
    }
}
