package io.samstream.gpu.sam3.video;

import io.samstream.gpu.sam3.Sam3TrackerConfig;

/**
 * How a stream finds and follows a concept's instances. {@link #defaults()} are Meta's ({@code
 * build_sam3_video_model}, {@code apply_temporal_disambiguation=True}) plus what an endless stream needs that a
 * session does not: the detection cadence, an object limit, and when an object no longer seen is lost and then
 * forgotten. {@link #withoutTemporalDisambiguation()} is Meta's variant without heuristics.
 *
 * @param everyFrames            run the detector on every n-th frame (1: every frame; a concept's first frame always)
 * @param detectionThreshold     a detection's probability must pass this (score_threshold_detection, 0.5)
 * @param nmsIou                 mask NMS among detections above this IoU (det_nms_thresh, 0.1; 0 off)
 * @param assocIou               a detection matches a track overlapping it by this IoU (assoc_iou_thresh, 0.1)
 * @param trackAssocIou          a track is matched when a detection overlaps it by this IoU (trk_assoc_iou_thresh,
 *                               0.5)
 * @param newDetectionThreshold  an unmatched detection starts a track above this probability (new_det_thresh, 0.7)
 * @param hotstartDelay          frames after its start within which a track can be removed (hotstart_delay, 15; 0
 *                               off)
 * @param hotstartUnmatched      ... when unmatched on this many frames (hotstart_unmatch_thresh, 8)
 * @param hotstartDuplicates     ... or a duplicate of an earlier track on this many (hotstart_dup_thresh, 8)
 * @param occlusionIou           suppression of overlapping tracks by recent occlusion above this IoU
 *                               (suppress_overlapping_based_on_recent_occlusion_threshold, 0.7; 0 off)
 * @param fillHoleArea           holes and sprinkles up to this area in low-resolution pixels are filled / removed
 *                               (fill_hole_area, 16; 0 off)
 * @param reconditionEvery       on frames that are a multiple of this, a track with a confident matching
 *                               detection is re-conditioned on its mask (recondition_every_nth_frame, 16; 0 off)
 * @param memorySelection        memory selection: a frame whose memory score is low is not attended
 *                               (use_memory_selection, on)
 * @param memorySelectionThreshold  that score (mf_threshold, 0.01)
 * @param pointerWindow          object pointers attended at most, the current frame's included (16; Meta uses
 *                               min(16, the video's length))
 * @param maxObjects             objects a stream tracks at most, all concepts together; further new detections are
 *                               dropped, the lowest scores first (Meta: unlimited)
 * @param lostAfter              frames in a row without a mask after which a track is reported lost
 * @param forgetAfter            further frames a lost track is still followed (and shown again when its mask
 *                               comes back) before its memory is dropped
 */
public record Sam3VideoSettings(int everyFrames, float detectionThreshold, float nmsIou, float assocIou,
        float trackAssocIou, float newDetectionThreshold, int hotstartDelay, int hotstartUnmatched,
        int hotstartDuplicates, float occlusionIou, int fillHoleArea, int reconditionEvery, boolean memorySelection,
        float memorySelectionThreshold, int pointerWindow, int maxObjects, int lostAfter, int forgetAfter) {

    public Sam3VideoSettings {
        positive("everyFrames", everyFrames, 100_000);
        unit("detectionThreshold", detectionThreshold);
        unit("nmsIou", nmsIou);
        unit("assocIou", assocIou);
        unit("trackAssocIou", trackAssocIou);
        unit("newDetectionThreshold", newDetectionThreshold);
        range("hotstartDelay", hotstartDelay, 0, 100_000);
        if (hotstartDelay > 0) {
            range("hotstartUnmatched", hotstartUnmatched, 1, hotstartDelay);
            range("hotstartDuplicates", hotstartDuplicates, 1, hotstartDelay);
        }
        unit("occlusionIou", occlusionIou);
        range("fillHoleArea", fillHoleArea, 0, 1_000_000);
        range("reconditionEvery", reconditionEvery, 0, 100_000);
        unit("memorySelectionThreshold", memorySelectionThreshold);
        range("pointerWindow", pointerWindow, 2, Sam3TrackerConfig.MAX_OBJECT_POINTERS);
        positive("maxObjects", maxObjects, 10_000);
        positive("lostAfter", lostAfter, 100_000);
        range("forgetAfter", forgetAfter, 0, 100_000);
    }

    /** Meta's video model's values, detection on every frame, at most 64 objects, lost after 30, forgotten 90 later. */
    public static Sam3VideoSettings defaults() {
        return new Sam3VideoSettings(1, 0.5f, 0.1f, 0.1f, 0.5f, 0.7f, 15, 8, 8, 0.7f, 16, 16, true, 0.01f,
                Sam3TrackerConfig.MAX_OBJECT_POINTERS, 64, 30, 90);
    }

    /** Meta's variant "without any heuristics": no hot-start, no re-conditioning, no memory selection. */
    public static Sam3VideoSettings withoutTemporalDisambiguation() {
        Sam3VideoSettings d = defaults();
        return new Sam3VideoSettings(d.everyFrames, d.detectionThreshold, d.nmsIou, d.assocIou, d.trackAssocIou,
                d.newDetectionThreshold, 0, 0, 0, d.occlusionIou, d.fillHoleArea, 0, false, d.memorySelectionThreshold,
                d.pointerWindow, d.maxObjects, d.lostAfter, d.forgetAfter);
    }

    /** These settings with the detector run every {@code n}-th frame. */
    public Sam3VideoSettings withEveryFrames(int n) {
        return new Sam3VideoSettings(n, detectionThreshold, nmsIou, assocIou, trackAssocIou, newDetectionThreshold,
                hotstartDelay, hotstartUnmatched, hotstartDuplicates, occlusionIou, fillHoleArea, reconditionEvery,
                memorySelection, memorySelectionThreshold, pointerWindow, maxObjects, lostAfter, forgetAfter);
    }

    /** These settings with other detection thresholds (a parity run's, or a trained model's). */
    public Sam3VideoSettings withThresholds(float detection, float newDetection) {
        return new Sam3VideoSettings(everyFrames, detection, nmsIou, assocIou, trackAssocIou, newDetection,
                hotstartDelay, hotstartUnmatched, hotstartDuplicates, occlusionIou, fillHoleArea, reconditionEvery,
                memorySelection, memorySelectionThreshold, pointerWindow, maxObjects, lostAfter, forgetAfter);
    }

    /** These settings with another pointer window (a finite clip of n frames: min(16, n), as Meta's session). */
    public Sam3VideoSettings withPointerWindow(int window) {
        return new Sam3VideoSettings(everyFrames, detectionThreshold, nmsIou, assocIou, trackAssocIou,
                newDetectionThreshold, hotstartDelay, hotstartUnmatched, hotstartDuplicates, occlusionIou, fillHoleArea,
                reconditionEvery, memorySelection, memorySelectionThreshold, window, maxObjects, lostAfter,
                forgetAfter);
    }

    /** These settings with other stream bounds. */
    public Sam3VideoSettings withBounds(int objects, int lost, int forget) {
        return new Sam3VideoSettings(everyFrames, detectionThreshold, nmsIou, assocIou, trackAssocIou,
                newDetectionThreshold, hotstartDelay, hotstartUnmatched, hotstartDuplicates, occlusionIou, fillHoleArea,
                reconditionEvery, memorySelection, memorySelectionThreshold, pointerWindow, objects, lost, forget);
    }

    private static void positive(String name, int v, int max) {
        range(name, v, 1, max);
    }

    private static void range(String name, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be " + min + " to " + max + ", got " + v);
        }
    }

    private static void unit(String name, float v) {
        if (!(v >= 0f && v <= 1f)) {
            throw new IllegalArgumentException(name + " must be in [0, 1], got " + v);
        }
    }
}
