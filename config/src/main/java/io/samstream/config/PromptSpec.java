package io.samstream.config;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The configured prompts of a stream: explicit objects (points and/or a box each, with an object id) and/or
 * an N x N grid of single foreground points. With tracking on they seed tracks on the stream's first frame;
 * with it off they are decoded as they are on every frame. Coordinates are pixels of the original frame. With a
 * SAM 3 checkpoint a stream has concepts instead: noun phrases whose every instance is found and tracked.
 *
 * @param objects  explicit objects, ids unique
 * @param grid     N for an N x N point grid (objects {@code gridIdBase + 0 .. N*N-1}, row by row), 0 for none
 * @param concepts noun phrases to find ("person", "forklift"), stripped, distinct, in order; SAM 3 only
 * @param conceptsEveryFrames this stream's detection cadence in concept tracking (the detector runs on every n-th
 *                 frame), 1 to {@link EngineSettings.Tracking#MAX_CONCEPTS_EVERY_FRAMES}; 0: the engine's
 *                 {@code samstream.tracking.concepts.every-frames}. SAM 3 only
 */
public record PromptSpec(List<ObjectPrompt> objects, int grid, List<String> concepts, int conceptsEveryFrames) {
    /** Concepts one stream may have at all ({@code samstream.limits.max-concepts-per-stream} may lower it). */
    public static final int MAX_CONCEPTS = 16;
    /** The longest concept at all ({@code samstream.limits.max-concept-chars} may lower it). */
    public static final int MAX_CONCEPT_CHARS = 1000;
    /** Grid objects are numbered from here, so they never collide with hand-given ids below it. */
    public static final int GRID_ID_BASE = 1000;
    public static final int MAX_GRID = 32;
    /**
     * Prompted ids are below it; objects found by automatic discovery get ids from here up, so the two
     * never clash.
     */
    public static final int DISCOVERED_ID_BASE = 1_000_000;

    public PromptSpec {
        objects = List.copyOf(objects);
        concepts = concepts(concepts);
        if (conceptsEveryFrames < 0 || conceptsEveryFrames > EngineSettings.Tracking.MAX_CONCEPTS_EVERY_FRAMES) {
            throw new IllegalArgumentException("concepts-every-frames must be 1 to "
                    + EngineSettings.Tracking.MAX_CONCEPTS_EVERY_FRAMES + " (or left out: the engine's"
                    + " samstream.tracking.concepts.every-frames), got " + conceptsEveryFrames);
        }
        if (grid < 0 || grid > MAX_GRID) {
            throw new IllegalArgumentException("grid must be 0 (none) to " + MAX_GRID + ", got " + grid);
        }
        Set<Integer> ids = new HashSet<>();
        for (ObjectPrompt o : objects) {
            if (!ids.add(o.id())) {
                throw new IllegalArgumentException("object id " + o.id() + " is given twice");
            }
            if (grid > 0 && o.id() >= GRID_ID_BASE && o.id() < GRID_ID_BASE + grid * grid) {
                throw new IllegalArgumentException("object id " + o.id() + " collides with the grid's ids "
                        + GRID_ID_BASE + ".." + (GRID_ID_BASE + grid * grid - 1));
            }
        }
    }

    /** Objects and/or a grid, no concepts. */
    public PromptSpec(List<ObjectPrompt> objects, int grid) {
        this(objects, grid, List.of());
    }

    /** With the engine's detection cadence. */
    public PromptSpec(List<ObjectPrompt> objects, int grid, List<String> concepts) {
        this(objects, grid, concepts, 0);
    }

    /** The same prompts, detecting concepts every {@code n}-th frame (0: the engine's cadence). */
    public PromptSpec withConceptsEveryFrames(int n) {
        return new PromptSpec(objects, grid, concepts, n);
    }

    /** Concepts alone. */
    public static PromptSpec ofConcepts(List<String> concepts) {
        return new PromptSpec(List.of(), 0, concepts);
    }

    /**
     * A list of concepts checked: each a phrase of 1 to {@link #MAX_CONCEPT_CHARS} characters after stripping
     * (printable: no control characters), no two equal, at most {@link #MAX_CONCEPTS}.
     */
    public static List<String> concepts(List<String> concepts) {
        if (concepts == null) {
            return List.of();
        }
        if (concepts.size() > MAX_CONCEPTS) {
            throw new IllegalArgumentException(concepts.size() + " concepts, at most " + MAX_CONCEPTS);
        }
        List<String> out = new ArrayList<>(concepts.size());
        for (String c : concepts) {
            String phrase = concept(c);
            if (out.contains(phrase)) {
                throw new IllegalArgumentException("concept \"" + phrase + "\" is given twice");
            }
            out.add(phrase);
        }
        return List.copyOf(out);
    }

    /** One concept checked and stripped (see {@link #concepts(List)}). */
    public static String concept(String phrase) {
        if (phrase == null || phrase.isBlank()) {
            throw new IllegalArgumentException("a concept is a noun phrase, got " + (phrase == null ? "null"
                    : "a blank one"));
        }
        String p = phrase.strip();
        if (p.length() > MAX_CONCEPT_CHARS) {
            throw new IllegalArgumentException("a concept has " + p.length() + " characters, at most "
                    + MAX_CONCEPT_CHARS);
        }
        for (int i = 0; i < p.length(); i++) {
            if (Character.isISOControl(p.charAt(i))) {
                throw new IllegalArgumentException("concept \"" + p.substring(0, Math.min(40, p.length()))
                        + "...\" has a control character");
            }
        }
        return p;
    }

    /** Every object of a {@code width} x {@code height} frame: the explicit ones, then the grid's. */
    public List<ObjectPrompt> resolve(int width, int height) {
        List<ObjectPrompt> all = new ArrayList<>(objects);
        for (int row = 0; row < grid; row++) {
            for (int col = 0; col < grid; col++) {
                double x = (col + 0.5) * width / grid;
                double y = (row + 0.5) * height / grid;
                all.add(new ObjectPrompt(GRID_ID_BASE + row * grid + col, new double[][] {{x, y, 1}}, null));
            }
        }
        return all;
    }

    public boolean isEmpty() {
        return objects.isEmpty() && grid == 0 && concepts.isEmpty();
    }

    /**
     * One object's prompt.
     *
     * @param id     the object's id in the mask records, 0 to {@code DISCOVERED_ID_BASE - 1}
     * @param points {@code [x, y, label]} each (label 1 foreground, 0 background), or null
     * @param box    {@code [x0, y0, x1, y1]}, or null
     */
    public record ObjectPrompt(int id, double[][] points, double[] box) {
        /**
         * Points one object may have: the CUDA mask decoder takes at most 64 sparse tokens per prompt
         * (the points, then a box's two corners or one padding point), and more points only cost time.
         */
        public static final int MAX_POINTS = 62;

        public ObjectPrompt {
            if (id < 0 || id >= DISCOVERED_ID_BASE) {
                throw new IllegalArgumentException("object id must be 0 to " + (DISCOVERED_ID_BASE - 1)
                        + " (ids from " + DISCOVERED_ID_BASE + " up are for discovered objects), got " + id);
            }
            if ((points == null || points.length == 0) && box == null) {
                throw new IllegalArgumentException("object " + id + " needs points or a box");
            }
            if (points != null && points.length > MAX_POINTS) {
                throw new IllegalArgumentException("object " + id + " has " + points.length + " points, at most "
                        + MAX_POINTS + " are allowed");
            }
            if (points != null) {
                for (double[] p : points) {
                    if (p.length != 2 && p.length != 3) {
                        throw new IllegalArgumentException("object " + id + ": a point is [x, y] or [x, y, label]");
                    }
                    if (p.length == 3 && p[2] != 0 && p[2] != 1) {
                        throw new IllegalArgumentException("object " + id + ": a point's label is 1 or 0, got " + p[2]);
                    }
                }
            }
            if (box != null && (box.length != 4 || box[2] <= box[0] || box[3] <= box[1])) {
                throw new IllegalArgumentException("object " + id + ": a box is [x0, y0, x1, y1] with x1 > x0, y1 > y0");
            }
        }

        /** Label of point {@code i}: its third number, else 1 (foreground). */
        public int label(int i) {
            return points[i].length == 3 ? (int) points[i][2] : 1;
        }
    }
}
