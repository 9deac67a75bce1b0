package io.samstream.stream.track.kalman;

import io.samstream.config.EngineSettings;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Re-identification: lost tracks ({@link Ghost}s) kept for {@code reid-window} frames, and the rule that brings one
 * back under its id. Each frame the tracker probes every ghost (at its last box, a covered one on its predicted path,
 * and where the {@link AppearanceSearch} leads); a probe whose mask is good by the scores, looks like the track's
 * memory ({@code reid-appearance}) and lies clear of the frame's objects ({@link #found}) finds it again.
 */
final class Reidentification {
    /** A probe's mask that shares more than this fraction (of either mask) with an object of the frame is not clear. */
    static final double MAX_OVERLAP = 0.3;

    /**
     * A lost track, the frame it was lost on and the last frame it was seen on (its last good mask): how long it has
     * had to move away from its last box.
     */
    record Ghost(Track track, long lostFrame, long seenFrame) {
        /**
         * Lost on {@code lostFrame} after its track's run of bad frames. (A ghost taken up from a stored state is made
         * this way too: for one that coasted after it was lost, that dates its last sighting a little early, which
         * only widens its search by those frames, up to {@code reid-search}.)
         */
        Ghost(Track track, long lostFrame) {
            this(track, lostFrame, lostFrame - track.badFrames());
        }
    }

    /** A lost track found again on this frame: the probe that found it, and how much it looked like it. */
    record Found(Work probe, Ghost ghost, double look) {}

    private final EngineSettings.Tracking settings;
    /** The ghosts by id, in the order they were lost. */
    private final Map<Integer, Ghost> ghosts = new LinkedHashMap<>();

    Reidentification(EngineSettings.Tracking settings) {
        this.settings = settings;
    }

    /** A track lost on {@code frame}: kept as a ghost when re-identification is on ({@code reid-window} > 0). */
    void lost(Track t, long frame) {
        if (settings.reidWindow() > 0) {
            ghosts.put(t.id(), new Ghost(t, frame));
        }
    }

    /** A ghost taken up from a stored state (failover). */
    void takeUp(Track t, long lostFrame) {
        ghosts.put(t.id(), new Ghost(t, lostFrame));
    }

    /** The ghosts, in the order they were lost. */
    Collection<Ghost> ghosts() {
        return ghosts.values();
    }

    /** None are coming back (a reset, a new frame size, a scene cut). */
    void clear() {
        ghosts.clear();
    }

    /** Drops the ghosts lost more than {@code reid-window} frames before {@code frame}, and those {@code gone} says. */
    void expire(long frame, Predicate<Track> gone) {
        ghosts.values().removeIf(g -> frame - g.lostFrame() > settings.reidWindow() || gone.test(g.track()));
    }

    /**
     * The ghosts the frame's probes found, in the order chosen: each is taken off the ghosts, its track updated with
     * the found mask, and its probe marked good and added to {@code kept} (so that a later probe on the same object
     * is not clear of it). A track probed twice takes the found mask that looks more like it. A covered ghost's
     * probe on its predicted path that finds nothing is a bad frame of its coasting.
     */
    List<Found> reidentify(List<Work> probes, List<Work> kept, float[] imageMean) {
        Map<Integer, Work> chosen = new LinkedHashMap<>();
        Map<Integer, Double> chosenLook = new HashMap<>();
        for (Work p : probes) {
            Ghost g = ghosts.get(p.id);
            if (g == null) {
                continue; // ended by a scene cut on this frame
            }
            if (!found(p, g, kept, imageMean)) {
                if (p.predicted != null) {
                    g.track().bad(true); // still behind its occluder: coasts on, the filter holding its size
                }
                continue;
            }
            double look = g.track().looksLike(p.look, imageMean);
            if (!chosen.containsKey(p.id) || look > chosenLook.get(p.id)) {
                chosen.put(p.id, p);
                chosenLook.put(p.id, look);
            }
        }
        List<Found> out = new ArrayList<>();
        for (Work p : chosen.values()) {
            Ghost g = ghosts.get(p.id);
            if (!found(p, g, kept, imageMean)) {
                continue; // on an object found again before it on this frame
            }
            ghosts.remove(p.id);
            Track t = g.track();
            if (p.predicted != null) {
                // Followed on its predicted path: taken up as a followed track is, its filter's motion kept.
                double[] box = p.read.box();
                boolean beside = Occlusion.besideAny(box, kept);
                t.measured(p.chosen, box, PartialBox.full(p.predicted, box, t.clearSize(),
                        s -> Occlusion.besideAny(s, kept)), !beside);
                t.remember(p.look, p.read.summary().area(), !beside);
            } else {
                t.reidentified(p.chosen, p.read.box());
                t.remember(p.look, p.read.summary().area(), true);
            }
            p.good = true;
            kept.add(p);
            out.add(new Found(p, g, chosenLook.get(p.id)));
        }
        return out;
    }

    /** Whether a probe's mask is its lost object: good by the scores, looks like it, clear of the frame's objects. */
    boolean found(Work p, Ghost g, List<Work> kept, float[] imageMean) {
        if (p.read.empty() || p.read.score() < settings.minPredictedIou()
                || p.read.stability() < settings.minStability() || !g.track().remembers()) {
            return false;
        }
        if (g.track().looksLike(p.look, imageMean) < settings.reidAppearance()) {
            return false;
        }
        for (Work k : kept) {
            if (k.good && (LowResMask.coveredBy(p.mask, k.mask) > MAX_OVERLAP
                    || LowResMask.coveredBy(k.mask, p.mask) > MAX_OVERLAP)) {
                return false;
            }
        }
        return true;
    }
}
