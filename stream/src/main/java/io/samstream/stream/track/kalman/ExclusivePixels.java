package io.samstream.stream.track.kalman;

import io.samstream.config.EngineSettings;
import io.samstream.stream.track.MaskReadout;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pixel, one object: a followed mask that holds more than half of another good mask of the frame (and does not
 * lie mostly inside it) is published and measured without that mask's pixels, so the inner object keeps what the two
 * share. Look-alikes in contact give SAM one mask for both, and the one whose prompt took in its neighbour would
 * otherwise report the pair. Its mask prompt for the next frame stays as SAM gave it: taking the neighbour out of the
 * prompt made crossings worse (bench/results/track-eval-hard-3.md and -5.md).
 */
final class ExclusivePixels {
    private static final Logger log = LoggerFactory.getLogger(ExclusivePixels.class);

    private final String stream;
    private final EngineSettings.Tracking settings;

    ExclusivePixels(String stream, EngineSettings.Tracking settings) {
        this.stream = stream;
        this.settings = settings;
    }

    /** Takes the other good masks' pixels out of each followed job's published mask ({@link Work#read}). */
    void apply(long frame, List<Work> work, Set<Work> gone, Set<Work> jumped) {
        List<Work> good = new ArrayList<>();
        for (Work w : work) {
            if (!gone.contains(w) && !jumped.contains(w) && w.scoresGood(settings)) {
                good.add(w);
            }
        }
        for (Work a : good) {
            if (a.previous == null) {
                continue; // a seed is the user's prompt as given
            }
            MaskReadout.Readout r = a.read;
            for (Work b : good) {
                if (b != a && LowResMask.coveredBy(b.mask, a.mask) > Occlusion.JUMP_COVER
                        && LowResMask.coveredBy(a.mask, b.mask) <= Occlusion.JUMP_COVER) {
                    r = new MaskReadout.Readout(a.id, r.score(), r.summary().minus(b.read.summary()));
                }
            }
            if (r != a.read && !r.empty()) {
                log.debug("stream {}: object {} at frame {}: its mask holds another object's; published without it "
                        + "({} -> {} px)", stream, a.id, frame, a.read.summary().area(), r.summary().area());
                a.read = r;
            }
        }
    }
}
