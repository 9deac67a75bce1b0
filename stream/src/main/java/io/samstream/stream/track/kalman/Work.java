package io.samstream.stream.track.kalman;

import io.samstream.config.EngineSettings;
import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.EmbeddingPool;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.MaskReadout;

/**
 * One decoding job of a frame in kalman mode: a seed, a followed track, or a lost track's probe; what its prompt was
 * and what came of it. The collaborators of {@link ObjectTracker} read and mark it; one frame's thread owns it.
 */
final class Work {
    final int id;
    final Prompt prompt;
    final boolean multimask;
    /** The followed track; for a seed, the track made from it once decoded. */
    Track track;
    final ObjectPrompt seed;
    final long revision;
    /** The shifted previous mask (followed tracks): what the chosen output should stay consistent with. */
    final boolean[] previous;
    /** The filter's predicted box in pixels (followed tracks). */
    double[] predicted;
    Tensor chosen;
    /** The chosen output plane (post-processed where the backend keeps it). */
    DecoderOutput.Plane plane;
    float score;
    boolean[] mask;
    MaskReadout.Readout read;
    /** Whether this frame's mask was taken (not empty, scores high enough, not jumped). */
    boolean good;
    /** Whether its mask slid onto another object's ({@link Occlusion}). */
    boolean jumped;
    /** The chosen mask's appearance: the embedding's mean under it ({@link EmbeddingPool}); null when not pooled. */
    float[] look;
    /** A lost track's probe at its last place (re-identification), not a live track's job. */
    boolean probe;
    /** A probe where the appearance search led ({@link AppearanceSearch}), not at the track's last box. */
    boolean search;

    Work(int id, Prompt prompt, boolean multimask, Track track, ObjectPrompt seed, long revision,
            boolean[] previous) {
        this.id = id;
        this.prompt = prompt;
        this.multimask = multimask;
        this.track = track;
        this.seed = seed;
        this.revision = revision;
        this.previous = previous;
    }

    /** Whether its mask is good by its scores: not empty, predicted IoU and stability at their minimums. */
    boolean scoresGood(EngineSettings.Tracking settings) {
        return !read.empty() && read.score() >= settings.minPredictedIou() && read.stability() >= settings.minStability();
    }
}
