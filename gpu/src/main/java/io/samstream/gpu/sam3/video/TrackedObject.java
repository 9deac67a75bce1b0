package io.samstream.gpu.sam3.video;

/**
 * One object on one frame of a stream, as published: its stable id (per stream), the concept that found it, the
 * detection score that started it ({@code out_probs}: Meta reports the score of the object's first detection) and
 * the tracker's score on this frame (sigmoid of the object score; the detection score on the object's first frame),
 * its box in frame pixels [x0, y0, x1, y1] (right and bottom exclusive, from the mask before overlaps are resolved,
 * as Meta's), and its mask at the frame's size, row-major, disjoint from the masks of its concept's other objects.
 */
public record TrackedObject(long id, Concept concept, float score, float trackerScore, int[] box, boolean[] mask,
        int width, int height) {}
