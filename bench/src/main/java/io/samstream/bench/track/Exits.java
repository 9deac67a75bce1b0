package io.samstream.bench.track;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * When and why objects stop being visible, from the ground truth: the events after which a tracker should
 * report the object {@code lost} ({@link LostDelay}), and the returns after which the benchmark prompts it
 * again ({@link #reprompts}).
 *
 * <p>An exit is a frame {@code t} where the object was visible in {@code t - 1} and is not in {@code t}, and
 * that stays so for at least {@value #MIN_ABSENCE} frames (up to the clip's end, or up to the frame it is
 * visible again). Its cause, in frame {@code t}:
 * <ul>
 *   <li>{@link Cause#CUT}: the object no longer exists (a scene cut ended it);</li>
 *   <li>{@link Cause#LEFT}: no part of it lies inside the frame;</li>
 *   <li>{@link Cause#COVERED}: it lies inside the frame but others cover all of it, and it is not seen again
 *       before the clip ends: taken over for good. (A hidden object that comes out again is an occlusion,
 *       which a tracker should coast through, not an exit.)</li>
 * </ul>
 * A shorter absence (a shape that dips out of the frame and back within a few frames) is no exit either.
 */
public final class Exits {
    /**
     * The shortest absence that counts: the engine's default {@code lost-after} (5) + 2 (the tolerance) +
     * 1, so that an object that comes back later than a well-behaved tracker reports it lost is an exit.
     */
    public static final int MIN_ABSENCE = 8;

    private Exits() {}

    public enum Cause {
        LEFT, CUT, COVERED;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * @param frame the first frame it is not visible
     * @param back  the first frame it is visible again, or -1 (not before the clip's end)
     */
    public record Exit(int object, int frame, Cause cause, int back) {}

    /** Every exit of every object, by object then frame. */
    public static List<Exit> of(ClipTruth truth) {
        List<Exit> out = new ArrayList<>();
        for (int o = 0; o < truth.objects(); o++) {
            for (int t = 1; t < truth.frames(); t++) {
                if (truth.visibleArea(o, t - 1) == 0 || truth.visibleArea(o, t) > 0) {
                    continue;
                }
                int back = t;
                while (back < truth.frames() && truth.visibleArea(o, back) == 0) {
                    back++;
                }
                int absence = back - t;
                if (back == truth.frames()) {
                    back = -1;
                }
                Cause cause = !truth.exists(o, t) ? Cause.CUT
                        : truth.inFrameArea(o, t) == 0 ? Cause.LEFT : Cause.COVERED;
                if (absence >= MIN_ABSENCE && (cause != Cause.COVERED || back < 0)) {
                    out.add(new Exit(o, t, cause, back));
                }
            }
        }
        return out;
    }

    /**
     * The frames on which the benchmark prompts an object again (box mode): after each exit because it
     * {@link Cause#LEFT} the frame, the first frame from its return on where it is fully visible. By the
     * record contract a lost object has no mask after its {@code lost}, so a user (or a detector) gives it again
     * when it is back; without this its return could never be scored. Object -> frames, increasing.
     */
    public static java.util.Map<Integer, List<Integer>> reprompts(ClipTruth truth) {
        java.util.Map<Integer, List<Integer>> out = new java.util.TreeMap<>();
        for (Exit e : of(truth)) {
            if (e.cause() != Cause.LEFT || e.back() < 0) {
                continue;
            }
            for (int t = e.back(); t < truth.frames(); t++) {
                if (truth.fullyVisible(e.object(), t)) {
                    out.computeIfAbsent(e.object(), k -> new ArrayList<>()).add(t);
                    break;
                }
                if (truth.visibleArea(e.object(), t) == 0) {
                    break; // gone again before it was whole: the next exit (if any) decides
                }
            }
        }
        return out;
    }
}
