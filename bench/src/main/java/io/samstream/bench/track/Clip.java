package io.samstream.bench.track;

/**
 * A short video with ground truth, as the tracking benchmark runs it: frame {@code t} is a pure function of
 * the clip's definition and seed. {@link SyntheticClip} (the four clips of {@link TrackClips}) and
 * {@link SceneClip} (the harder families of {@link HardClips}) are the two kinds.
 */
public interface Clip {
    String name();

    int width();

    int height();

    int frames();

    double fps();

    long seed();

    /** Frame {@code t}: RGB24, rows top to bottom. */
    byte[] render(int t);

    /** The ground truth of every frame (from the clip's geometry, not from rendered pixels). */
    ClipTruth truth();

    /** The same clip cut to its first {@code n} frames (same pixels, same truth, frame for frame). */
    Clip firstFrames(int n);

    /** For the report's header: size, frames, objects and what else sets the clip apart. */
    String describe();
}
