package io.samstream.gpu.cuda;

/** Where a profiled pass records a timing event after each step (the encoder's and the mask decoder's profilers). */
public interface StepMarks {
    void mark(String label);

    /** {@code marks.mark(label)}, unless {@code marks} is null (a pass that is not profiled). */
    static void mark(StepMarks marks, String label) {
        if (marks != null) {
            marks.mark(label);
        }
    }
}
