package io.samstream.bench.track;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalInt;

/**
 * How long after an object is gone the tracker says so: for each {@link Exits exit} of a prompted object, the
 * frames from its exit frame (the first where it is not visible) to the first record that lists it as
 * {@code lost}. The search runs from the object's last prompt at or before the exit up to (not including)
 * its next prompt or next exit, whichever is first; a {@code lost} before the exit frame (the tracker gave up
 * while the object still showed) counts as delay 0 and is counted as early. An exit with no {@code lost} in
 * that window is never reported. Exits of objects not prompted before them are not counted.
 */
public final class LostDelay {
    private LostDelay() {}

    /** One exit and the frame its {@code lost} came (-1: never). */
    public record Event(Exits.Exit exit, int lostFrame) {
        public boolean reported() {
            return lostFrame >= 0;
        }

        /** Frames from the exit to the {@code lost} (0 when it came first); only for reported events. */
        public int delay() {
            if (!reported()) {
                throw new IllegalStateException("object " + exit.object() + " was never reported lost");
            }
            return Math.max(0, lostFrame - exit.frame());
        }

        public boolean early() {
            return reported() && lostFrame < exit.frame();
        }
    }

    public record Result(List<Event> events) {
        public Result {
            events = List.copyOf(events);
        }

        public int exits() {
            return events.size();
        }

        public int neverReported() {
            return (int) events.stream().filter(e -> !e.reported()).count();
        }

        public int early() {
            return (int) events.stream().filter(Event::early).count();
        }

        public OptionalDouble meanDelay() {
            return events.stream().filter(Event::reported).mapToInt(Event::delay).average();
        }

        public OptionalInt maxDelay() {
            return events.stream().filter(Event::reported).mapToInt(Event::delay).max();
        }

        /** Exits reported within {@code frames} frames (delay <= frames). */
        public int reportedWithin(int frames) {
            return (int) events.stream().filter(e -> e.reported() && e.delay() <= frames).count();
        }

        /** The results of several clips as one. */
        public static Result merge(List<Result> results) {
            List<Event> all = new ArrayList<>();
            results.forEach(r -> all.addAll(r.events()));
            return new Result(all);
        }
    }

    /**
     * @param exits   the clip's exits ({@link Exits#of})
     * @param prompts object -> the frames it was prompted on (increasing; the first is its first prompt)
     * @param lost    per frame: the ids its record lists as lost
     */
    public static Result of(List<Exits.Exit> exits, Map<Integer, List<Integer>> prompts, List<List<Integer>> lost) {
        List<Event> events = new ArrayList<>();
        for (Exits.Exit e : exits) {
            List<Integer> p = prompts.get(e.object());
            if (p == null || p.isEmpty() || p.get(0) >= e.frame()) {
                continue;
            }
            int from = p.get(0);
            int to = lost.size();
            for (int f : p) {
                if (f < e.frame()) {
                    from = f;
                } else {
                    to = Math.min(to, f);
                    break;
                }
            }
            for (Exits.Exit other : exits) {
                if (other.object() == e.object() && other.frame() > e.frame()) {
                    to = Math.min(to, other.frame());
                }
            }
            int at = -1;
            for (int t = from; t < to && at < 0; t++) {
                if (lost.get(t).contains(e.object())) {
                    at = t;
                }
            }
            events.add(new Event(e, at));
        }
        return new Result(events);
    }
}
