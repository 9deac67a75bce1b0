package io.samstream.stream.track.kalman;

import io.samstream.config.PromptSpec.ObjectPrompt;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.FrameGeometry;
import io.samstream.stream.track.TrackPrompts;

/**
 * A frame's prompts in kalman mode, and the choice among the decoder's outputs. A seed is the user's prompt as given
 * (a lone point asks for SAM's three masks). A followed track is prompted with its filter's predicted box, its last
 * good logits shifted by the predicted motion as the mask prompt, and a positive point at that mask's centroid when
 * the centroid lies inside it (for a ring or a crescent it does not, and a point there would pick the hole). A lost
 * track's probe is a box alone. Followed tracks and probes decode three masks; the one with the best predicted IoU
 * plus IoU with the shifted previous mask wins (the IoU head alone may prefer a part or a neighbour, consistency alone
 * would never let the mask change).
 */
final class FollowPrompts {
    private final boolean centroidPoint;

    /** @param centroidPoint whether followed tracks get the centroid point (off only to measure what it buys) */
    FollowPrompts(boolean centroidPoint) {
        this.centroidPoint = centroidPoint;
    }

    /** A prompted object's seed: its prompt as given, the track made once it is decoded. */
    static Work seed(TrackPrompts.Seed s, FrameGeometry g) {
        ObjectPrompt o = s.prompt();
        return new Work(o.id(), g.modelPrompt(o), FrameGeometry.wantsMultimask(o), null, o, s.revision(), null);
    }

    /** A live track followed into this frame (its filter steps one frame ahead). */
    Work follow(Track t, FrameGeometry g) {
        double[] last = t.box();
        t.filter().predict();
        double[] predicted = t.filter().box();
        int[] shift = g.lowResShift((predicted[0] + predicted[2] - last[0] - last[2]) / 2,
                (predicted[1] + predicted[3] - last[1] - last[3]) / 2);
        Tensor previous = LowResMask.shift(t.lowResLogits(), shift[0], shift[1]);
        boolean[] previousMask = LowResMask.binary(previous);
        float[][] points = null;
        int[] labels = null;
        if (centroidPoint) {
            double[] c = LowResMask.centroid(previousMask, g.lowResSize());
            if (c != null && LowResMask.contains(previousMask, g.lowResSize(), c[0], c[1])) {
                points = new float[][] {g.lowResToModel(c[0], c[1])};
                labels = new int[] {1};
            }
        }
        float[] box = g.modelBox(predicted);
        if (box[2] - box[0] < 1 || box[3] - box[1] < 1) {
            // Predicted out of the frame: the last good box (from a non-empty mask, so never empty) instead.
            box = g.modelBox(last);
        }
        Work w = new Work(t.id(), new Prompt(points, labels, box, previous), true, t, null, t.revision(),
                previousMask);
        w.predicted = predicted;
        return w;
    }

    /** A lost covered track's probe: followed as a live track is (its predicted box, previous mask, point). */
    Work coast(Track t, FrameGeometry g) {
        Work w = follow(t, g);
        w.probe = true;
        return w;
    }

    /** A lost track's probe: SAM asked for a mask in {@code box} (pixels), no mask prompt. */
    static Work probe(Track t, double[] box, FrameGeometry g) {
        Work w = new Work(t.id(), new Prompt(null, null, g.modelBox(box), null), true, t, null, t.revision(), null);
        w.probe = true;
        return w;
    }

    /** Seeds: the best predicted IoU; followed tracks: the best predicted IoU + consistency with the previous mask. */
    static void choose(Work w, DecoderOutput out) {
        float[] iou = out.iouPredictions();
        int best = 0;
        double bestScore = Double.NEGATIVE_INFINITY;
        boolean[] bestMask = null;
        for (int i = 0; i < iou.length; i++) {
            boolean[] m = LowResMask.binary(LowResMask.select(out.lowResLogits(), i));
            double s = (Float.isFinite(iou[i]) ? iou[i] : 0) + (w.previous == null ? 0 : LowResMask.iou(m, w.previous));
            if (s > bestScore) {
                bestScore = s;
                best = i;
                bestMask = m;
            }
        }
        w.plane = out.plane(best);
        w.chosen = LowResMask.select(out.lowResLogits(), best);
        w.mask = bestMask;
        w.score = iou[best];
    }
}
