package io.samstream.gpu.cuda.sam2;

import io.samstream.gpu.sam2.ObjectPrompt;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How a {@link CudaSam2Tracker#step} runs, decided on the host before any GPU work: which requests' frames each
 * encoder pass encodes and which units of requests then run ({@link #plan}), how many objects the step adds
 * ({@link #newObjects}), and whether a request's frame and prompts are ones the GPU takes ({@link #checkRequest}).
 */
final class StepPlan {
    private StepPlan() {}

    /**
     * An encoder pass of a step and what follows it: the requests whose frames it encodes (slot j: the j-th) and the
     * units whose objects then run, in order (a unit: up to maxFrames requests of one round, one frame per stream).
     */
    record Pass(List<Integer> frames, List<List<Integer>> units) {}

    /**
     * How a step runs: request i is a frame of stream {@code streamOf[i]} (a stream's requests are its consecutive
     * frames), {@code followed} the objects each stream follows before the step. Round r holds the r-th request of
     * every stream that has one, in request order, cut into units of {@code maxFrames} (as a step of that round alone
     * would cut it); passes take whole units, in order, while their frames fit in {@code maxFrames} encoder slots. A
     * frame with no object to follow (none followed yet, none prompted) is not encoded.
     */
    static List<Pass> plan(int[] streamOf, List<? extends Set<Integer>> followed, List<List<ObjectPrompt>> prompts,
                           int maxFrames) {
        int n = streamOf.length;
        boolean[] work = new boolean[n];
        boolean[] hasObjects = new boolean[followed.size()];
        int[] seen = new int[followed.size()];
        for (int k = 0; k < hasObjects.length; k++) {
            hasObjects[k] = !followed.get(k).isEmpty();
        }
        List<List<Integer>> rounds = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int round = seen[streamOf[i]]++;
            if (round == rounds.size()) {
                rounds.add(new ArrayList<>());
            }
            rounds.get(round).add(i);
            work[i] = hasObjects[streamOf[i]] || !prompts.get(i).isEmpty();
            hasObjects[streamOf[i]] = work[i];
        }
        List<Pass> passes = new ArrayList<>();
        List<List<Integer>> units = new ArrayList<>();
        List<Integer> frames = new ArrayList<>();
        for (List<Integer> round : rounds) {
            for (int from = 0; from < round.size(); from += maxFrames) {
                List<Integer> unit = List.copyOf(round.subList(from, Math.min(round.size(), from + maxFrames)));
                int more = 0;
                for (int i : unit) {
                    more += work[i] ? 1 : 0;
                }
                if (frames.size() + more > maxFrames) {
                    passes.add(new Pass(List.copyOf(frames), List.copyOf(units)));
                    units.clear();
                    frames.clear();
                }
                units.add(unit);
                for (int i : unit) {
                    if (work[i]) {
                        frames.add(i);
                    }
                }
            }
        }
        if (!units.isEmpty()) {
            passes.add(new Pass(List.copyOf(frames), List.copyOf(units)));
        }
        return passes;
    }

    /**
     * New objects over all the requests of a step: prompts for ids their stream does not follow by then (neither
     * before the step nor from an earlier request of it).
     */
    static int newObjects(int[] streamOf, List<? extends Set<Integer>> followed, List<List<ObjectPrompt>> prompts) {
        List<Set<Integer>> ids = new ArrayList<>();
        for (Set<Integer> f : followed) {
            ids.add(new HashSet<>(f));
        }
        int n = 0;
        for (int i = 0; i < streamOf.length; i++) {
            for (ObjectPrompt p : prompts.get(i)) {
                n += ids.get(streamOf[i]).add(p.objectId()) ? 1 : 0;
            }
        }
        return n;
    }

    /** One frame's prompts, as the decoder takes them: one per id, at most MAX_SPARSE - 1 points, finite. */
    static void checkPrompts(List<ObjectPrompt> prompts) {
        Set<Integer> ids = new HashSet<>();
        for (ObjectPrompt p : prompts) {
            if (!ids.add(p.objectId())) {
                throw new IllegalArgumentException("two prompts for object " + p.objectId() + " on one frame");
            }
            float[][] points = p.allPoints();
            if (points.length + 1 > CudaSam2MaskDecoder.MAX_SPARSE) {
                throw new IllegalArgumentException("object " + p.objectId() + ": " + points.length
                        + " points (box corners count); the GPU decoder takes at most "
                        + (CudaSam2MaskDecoder.MAX_SPARSE - 1));
            }
            for (float[] pt : points) {
                if (!Float.isFinite(pt[0]) || !Float.isFinite(pt[1])) {
                    throw new IllegalArgumentException("object " + p.objectId() + ": a point that is not a finite "
                            + "number");
                }
            }
        }
    }

    /**
     * Request {@code i}'s frame (RGB bytes of a {@code side} x {@code side} model input) and prompts ({@link
     * #checkPrompts}), checked; the error names the request.
     */
    static void checkRequest(int i, byte[] rgb, int side, List<ObjectPrompt> prompts) {
        if (rgb == null || rgb.length != 3 * side * side) {
            throw new IllegalArgumentException("request " + i + " of the step: RGB frame of "
                    + (rgb == null ? 0 : rgb.length) + " bytes; the model takes " + side + " x " + side
                    + " (resize first)");
        }
        try {
            checkPrompts(prompts);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("request " + i + " of the step: " + e.getMessage(), e);
        }
    }

    /**
     * Request i's stream as an index into {@code distinct}, which gets each of {@code owners} (told apart by identity)
     * once, in the order of their first request: {@link #plan}'s {@code streamOf}.
     */
    static <T> int[] streamIndexes(List<T> owners, List<T> distinct) {
        Map<T, Integer> index = new IdentityHashMap<>();
        int[] of = new int[owners.size()];
        for (int i = 0; i < owners.size(); i++) {
            of[i] = index.computeIfAbsent(owners.get(i), k -> {
                distinct.add(k);
                return distinct.size() - 1;
            });
        }
        return of;
    }
}
