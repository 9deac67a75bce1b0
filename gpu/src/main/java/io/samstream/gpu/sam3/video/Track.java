package io.samstream.gpu.sam3.video;

/**
 * One tracked object of a concept: its id, the detection score that started it, the frame it started on, its
 * cohort (the objects that started with it), its bounded memory, and how many frames in a row it has not been
 * shown.
 */
final class Track {
    final long id;
    final float score;
    final int firstFrame;
    final Cohort cohort;
    final ObjectMemory memory;
    int hiddenFor;

    Track(long id, float score, int firstFrame, Cohort cohort, ObjectMemory memory) {
        this.id = id;
        this.score = score;
        this.firstFrame = firstFrame;
        this.cohort = cohort;
        this.memory = memory;
    }
}
