package io.samstream.bench.track;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.Collectors;

/**
 * A synthetic clip of the harder tracking families ({@link HardClips}): solid shapes of any {@link Outline},
 * rotating and moving on piecewise-linear paths, over a {@link Texture}d background, optionally seen by a
 * shaking camera, in one or more scenes separated by cuts. At a cut the background and every object change:
 * the objects of the scene before no longer exist (their ground truth is empty from the cut on), those of
 * the next scene exist from it. Frame {@code t} is a pure function of the definition and the seed.
 *
 * <p>Coordinates are the scene's: an actor at {@code (x, y)} appears at {@code (x - ox, y - oy)} in frame
 * {@code t}, where {@code (ox, oy)} is the camera's offset then (integers in {@code [-shake, shake]}, drawn
 * from the seed); each scene's background is painted {@code shake} pixels larger on every side and moves
 * with the actors. Actors are drawn in list order (a later one covers an earlier one). Object {@code i} of
 * the ground truth is actor {@code i}; pixel {@code (x, y)} belongs to an actor when its centre
 * {@code (x + 0.5, y + 0.5)} lies inside it, as for the test pattern.
 */
public final class SceneClip implements Clip {
    /**
     * One object: an outline in a colour, turned by {@code angle0 + spin t} radians in frame {@code t}, its
     * centre on the path through {@code keys} (triples {@code t, x, y}, frames increasing; linear between
     * keys, held before the first and after the last).
     *
     * @param scene the scene it belongs to (it exists only in that scene's frames)
     */
    public record Actor(Outline outline, int colour, double angle0, double spin, int scene, double[] keys) {
        public Actor {
            if (keys.length < 3 || keys.length % 3 != 0) {
                throw new IllegalArgumentException("an actor's path needs triples (t, x, y), got " + keys.length
                        + " numbers");
            }
            for (int i = 3; i < keys.length; i += 3) {
                if (!(keys[i] > keys[i - 3])) {
                    throw new IllegalArgumentException("an actor's path needs increasing frames, got " + keys[i - 3]
                            + " then " + keys[i]);
                }
            }
            keys = keys.clone();
        }

        /** The centre in scene coordinates in frame {@code t}. */
        public double[] position(double t) {
            if (t <= keys[0]) {
                return new double[] {keys[1], keys[2]};
            }
            for (int i = 3; i < keys.length; i += 3) {
                if (t <= keys[i]) {
                    double s = (t - keys[i - 3]) / (keys[i] - keys[i - 3]);
                    return new double[] {keys[i - 2] + s * (keys[i + 1] - keys[i - 2]),
                            keys[i - 1] + s * (keys[i + 2] - keys[i - 1])};
                }
            }
            return new double[] {keys[keys.length - 2], keys[keys.length - 1]};
        }

        public double angle(int t) {
            return angle0 + spin * t;
        }
    }

    private final String name;
    private final String family;
    private final int width;
    private final int height;
    private final int frames;
    private final double fps;
    private final long seed;
    private final int shake;
    private final int[] sceneStarts;
    private final Texture[] textures;
    private final List<Actor> actors;
    private final byte[][] backgrounds;
    private final int[] offsetX;
    private final int[] offsetY;

    /**
     * @param sceneStarts the first frame of each scene (0 first, increasing): a cut before each later one
     * @param textures    each scene's background
     */
    public SceneClip(String name, String family, int width, int height, int frames, double fps, long seed, int shake,
            int[] sceneStarts, Texture[] textures, List<Actor> actors) {
        if (width < 16 || height < 16 || frames < 1 || !(fps > 0) || shake < 0) {
            throw new IllegalArgumentException("clip " + name + ": needs width, height >= 16, frames >= 1, fps > 0,"
                    + " shake >= 0");
        }
        if (sceneStarts.length == 0 || sceneStarts[0] != 0 || sceneStarts.length != textures.length) {
            throw new IllegalArgumentException("clip " + name + ": scenes must start at frame 0, one texture each");
        }
        for (int i = 1; i < sceneStarts.length; i++) {
            if (sceneStarts[i] <= sceneStarts[i - 1]) {
                throw new IllegalArgumentException("clip " + name + ": scene starts must increase");
            }
        }
        if (actors.isEmpty() || actors.size() > Byte.MAX_VALUE) {
            throw new IllegalArgumentException("clip " + name + ": needs 1 to 127 actors, got " + actors.size());
        }
        for (Actor a : actors) {
            if (a.scene() < 0 || a.scene() >= sceneStarts.length) {
                throw new IllegalArgumentException("clip " + name + ": an actor of scene " + a.scene() + ", the clip has "
                        + sceneStarts.length);
            }
        }
        this.name = name;
        this.family = family;
        this.width = width;
        this.height = height;
        this.frames = frames;
        this.fps = fps;
        this.seed = seed;
        this.shake = shake;
        this.sceneStarts = sceneStarts.clone();
        this.textures = textures.clone();
        this.actors = List.copyOf(actors);
        Random random = new Random(seed);
        this.backgrounds = new byte[textures.length][];
        for (int s = 0; s < textures.length; s++) {
            backgrounds[s] = textures[s].paint(width + 2 * shake, height + 2 * shake, random);
        }
        Random camera = new Random(seed * 31 + 7);
        this.offsetX = new int[frames];
        this.offsetY = new int[frames];
        for (int t = 0; t < frames && shake > 0; t++) {
            offsetX[t] = camera.nextInt(2 * shake + 1) - shake;
            offsetY[t] = camera.nextInt(2 * shake + 1) - shake;
        }
    }

    /** Builds a clip scene by scene: actors belong to the scene last started. */
    public static Builder builder(String name, String family, int frames, long seed) {
        return new Builder(name, family, frames, seed);
    }

    public static final class Builder {
        private final String name;
        private final String family;
        private final int frames;
        private final long seed;
        private int width = HardClips.WIDTH;
        private int height = HardClips.HEIGHT;
        private int shake;
        private final List<Integer> starts = new ArrayList<>();
        private final List<Texture> textures = new ArrayList<>();
        private final List<Actor> actors = new ArrayList<>();

        private Builder(String name, String family, int frames, long seed) {
            this.name = name;
            this.family = family;
            this.frames = frames;
            this.seed = seed;
        }

        public Builder shake(int pixels) {
            this.shake = pixels;
            return this;
        }

        /** The first scene's background. */
        public Builder background(Texture texture) {
            if (!starts.isEmpty()) {
                throw new IllegalStateException("background() starts the first scene; later ones start with cut()");
            }
            starts.add(0);
            textures.add(texture);
            return this;
        }

        /** A cut: from {@code frame} on, a new background, and only the actors added after this call. */
        public Builder cut(int frame, Texture texture) {
            starts.add(frame);
            textures.add(texture);
            return this;
        }

        /** An actor of the current scene; {@code keys} are triples {@code t, x, y}. */
        public Builder actor(Outline outline, int colour, double angle0, double spin, double... keys) {
            if (starts.isEmpty()) {
                throw new IllegalStateException("background() first");
            }
            actors.add(new Actor(outline, colour, angle0, spin, starts.size() - 1, keys));
            return this;
        }

        public SceneClip build() {
            return new SceneClip(name, family, width, height, frames, HardClips.FPS, seed, shake,
                    starts.stream().mapToInt(Integer::intValue).toArray(), textures.toArray(new Texture[0]), actors);
        }
    }

    @Override
    public String name() {
        return name;
    }

    /** The family of {@link HardClips} it belongs to. */
    public String family() {
        return family;
    }

    @Override
    public int width() {
        return width;
    }

    @Override
    public int height() {
        return height;
    }

    @Override
    public int frames() {
        return frames;
    }

    @Override
    public double fps() {
        return fps;
    }

    @Override
    public long seed() {
        return seed;
    }

    public int shake() {
        return shake;
    }

    public List<Actor> actors() {
        return actors;
    }

    /** Each scene's background texture. */
    public Texture[] textures() {
        return textures.clone();
    }

    /** The first frame of each scene (0, then the frame after each cut). */
    public int[] sceneStarts() {
        return sceneStarts.clone();
    }

    /** The scene shown in frame {@code t}. */
    public int sceneAt(int t) {
        int s = 0;
        while (s + 1 < sceneStarts.length && sceneStarts[s + 1] <= t) {
            s++;
        }
        return s;
    }

    /** Whether actor {@code object} is in the scene of frame {@code t}. */
    public boolean exists(int object, int t) {
        return actors.get(object).scene() == sceneAt(t);
    }

    @Override
    public SceneClip firstFrames(int n) {
        if (n < 1 || n > frames) {
            throw new IllegalArgumentException("clip " + name + " has " + frames + " frames, cannot keep " + n);
        }
        return new SceneClip(name, family, width, height, n, fps, seed, shake, sceneStarts, textures, actors);
    }

    @Override
    public String describe() {
        String scenes = Arrays.stream(textures).map(x -> x.name().toLowerCase(Locale.ROOT))
                .collect(Collectors.joining(" | cut at " + (sceneStarts.length > 1 ? sceneStarts[1] : 0) + " | "));
        return String.format(Locale.ROOT, "%dx%d, %d frames, %d objects%s, %s; %s", width, height, frames, actors.size(),
                shake > 0 ? ", shake " + shake + " px" : "", scenes,
                actors.stream().map(a -> a.outline().label()).collect(Collectors.joining(", ")));
    }

    /** Actor {@code object}'s centre in frame {@code t}, frame pixels (it may lie outside the frame). */
    public double[] centre(int object, int t) {
        checkFrame(t);
        double[] p = actors.get(object).position(t);
        return new double[] {p[0] - offsetX[t], p[1] - offsetY[t]};
    }

    /** The camera's offset in frame {@code t}: {@code [ox, oy]}. */
    public int[] cameraOffset(int t) {
        checkFrame(t);
        return new int[] {offsetX[t], offsetY[t]};
    }

    /** Whether actor {@code object} (existing or not) covers frame pixel {@code (x, y)} in frame {@code t}. */
    public boolean covers(int object, int t, int x, int y) {
        Actor a = actors.get(object);
        double[] c = centre(object, t);
        double dx = x + 0.5 - c[0];
        double dy = y + 0.5 - c[1];
        double th = a.angle(t);
        double cos = Math.cos(th);
        double sin = Math.sin(th);
        return a.outline().covers(cos * dx + sin * dy, -sin * dx + cos * dy);
    }

    /** Frame {@code t}: RGB24, rows top to bottom. */
    @Override
    public byte[] render(int t) {
        checkFrame(t);
        int scene = sceneAt(t);
        int sceneWidth = width + 2 * shake;
        int left = shake + offsetX[t];
        int top = shake + offsetY[t];
        byte[] rgb = new byte[3 * width * height];
        for (int y = 0; y < height; y++) {
            System.arraycopy(backgrounds[scene], 3 * ((top + y) * sceneWidth + left), rgb, 3 * y * width, 3 * width);
        }
        for (int i = 0; i < actors.size(); i++) {
            if (actors.get(i).scene() != scene) {
                continue;
            }
            int colour = actors.get(i).colour();
            int[] b = bounds(i, t, true);
            for (int y = b[1]; y <= b[3]; y++) {
                for (int x = b[0]; x <= b[2]; x++) {
                    if (covers(i, t, x, y)) {
                        int at = 3 * (y * width + x);
                        rgb[at] = (byte) (colour >> 16);
                        rgb[at + 1] = (byte) (colour >> 8);
                        rgb[at + 2] = (byte) colour;
                    }
                }
            }
        }
        return rgb;
    }

    @Override
    public ClipTruth truth() {
        int n = actors.size();
        byte[][] labels = new byte[frames][];
        int[][] fullArea = new int[frames][n];
        int[][] inFrame = new int[frames][n];
        boolean[][] exists = new boolean[frames][n];
        for (int t = 0; t < frames; t++) {
            byte[] l = new byte[width * height];
            Arrays.fill(l, ClipTruth.BACKGROUND);
            for (int i = 0; i < n; i++) {
                if (!exists(i, t)) {
                    continue;
                }
                exists[t][i] = true;
                int[] b = bounds(i, t, false);
                for (int y = b[1]; y <= b[3]; y++) {
                    for (int x = b[0]; x <= b[2]; x++) {
                        if (covers(i, t, x, y)) {
                            fullArea[t][i]++;
                            if (x >= 0 && y >= 0 && x < width && y < height) {
                                inFrame[t][i]++;
                                l[y * width + x] = (byte) i;
                            }
                        }
                    }
                }
            }
            labels[t] = l;
        }
        return new ClipTruth(width, height, n, labels, fullArea, inFrame, exists);
    }

    /** The pixel box {@code [x0, y0, x1, y1]} (inclusive) that holds the actor, clipped to the frame or not. */
    private int[] bounds(int object, int t, boolean clip) {
        double[] c = centre(object, t);
        double e = actors.get(object).outline().extent() + 1;
        int x0 = (int) Math.floor(c[0] - e);
        int y0 = (int) Math.floor(c[1] - e);
        int x1 = (int) Math.ceil(c[0] + e);
        int y1 = (int) Math.ceil(c[1] + e);
        return clip ? new int[] {Math.max(0, x0), Math.max(0, y0), Math.min(width - 1, x1), Math.min(height - 1, y1)}
                : new int[] {x0, y0, x1, y1};
    }

    private void checkFrame(int t) {
        if (t < 0 || t >= frames) {
            throw new IndexOutOfBoundsException("clip " + name + " has frames 0.." + (frames - 1) + ", not " + t);
        }
    }
}
