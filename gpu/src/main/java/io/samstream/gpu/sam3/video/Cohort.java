package io.samstream.gpu.sam3.video;

import java.util.ArrayList;
import java.util.List;

/**
 * The objects of one concept that started on the same frame. Meta's video model tracks them as one batched tracker
 * state, and two things are shared per state, not per object: memory selection scores a frame by the mean of its
 * objects' scores ({@code cal_mem_score} over the batch, recomputed over the survivors when one is removed), and a
 * frame re-conditioned for one of them becomes a conditioning frame for all. Both are kept here so that each object
 * still has its own bounded memory.
 */
final class Cohort {
    final List<Track> members = new ArrayList<>();

    /** Sets frame t's selection score of every member to the mean of their own scores on it. */
    void score(int t) {
        float sum = 0f;
        int n = 0;
        for (Track m : members) {
            ObjectMemory.Entry e = m.memory.tracked(t);
            if (e != null) {
                sum += e.ownScore;
                n++;
            }
        }
        if (n == 0) {
            return;
        }
        float mean = sum / n;
        for (Track m : members) {
            ObjectMemory.Entry e = m.memory.tracked(t);
            if (e != null) {
                e.selectionScore = mean;
            }
        }
    }

    /** A member leaves: every frame it kept is scored again over the others. */
    void remove(Track t) {
        members.remove(t);
        java.util.Set<Integer> frames = new java.util.TreeSet<>();
        for (Track m : members) {
            frames.addAll(m.memory.trackedFrames().keySet());
        }
        for (int f : frames) {
            score(f);
        }
    }
}
