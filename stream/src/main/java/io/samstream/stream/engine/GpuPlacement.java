package io.samstream.stream.engine;

import java.util.HashMap;
import java.util.Map;
import java.util.function.IntToLongFunction;

/**
 * Which of the engine's GPUs each stream runs on. A stream is placed when it starts on the least loaded GPU:
 * the fewest streams placed, then the fewest frames in flight (read when it starts), then the lowest index.
 * Then it stays (sticky): a stream id keeps its GPU for as long as any run of it is in the engine, so a
 * redefined stream's new run goes where its old run still publishes, and a stream taken over in a cluster
 * stays on the GPU it started on. Once its last run ended the id is free to go elsewhere next time.
 */
final class GpuPlacement {
    private final int gpus;
    private final IntToLongFunction framesInFlight;
    /** Per stream id: its GPU and its runs in the engine. */
    private final Map<String, int[]> placed = new HashMap<>();
    private final int[] streams;

    /**
     * @param gpus           how many GPUs (at least one)
     * @param framesInFlight the frames of a GPU's streams in the pipeline now, by GPU index
     */
    GpuPlacement(int gpus, IntToLongFunction framesInFlight) {
        if (gpus < 1) {
            throw new IllegalArgumentException("at least one GPU, got " + gpus);
        }
        this.gpus = gpus;
        this.framesInFlight = framesInFlight;
        this.streams = new int[gpus];
    }

    /** A new run of stream {@code id}: the GPU it runs on (its GPU already when a run of it is in the engine). */
    synchronized int place(String id) {
        int[] p = placed.get(id);
        if (p != null) {
            p[1]++;
            return p[0];
        }
        int best = 0;
        long bestFrames = gpus == 1 ? 0 : framesInFlight.applyAsLong(0);
        for (int g = 1; g < gpus; g++) {
            long frames = framesInFlight.applyAsLong(g);
            if (streams[g] < streams[best] || streams[g] == streams[best] && frames < bestFrames) {
                best = g;
                bestFrames = frames;
            }
        }
        placed.put(id, new int[] {best, 1});
        streams[best]++;
        return best;
    }

    /** A run of stream {@code id} ended; after its last run the id no longer counts on its GPU. */
    synchronized void release(String id) {
        int[] p = placed.get(id);
        if (p == null) {
            throw new IllegalStateException("stream " + id + " is not placed");
        }
        if (--p[1] == 0) {
            placed.remove(id);
            streams[p[0]]--;
        }
    }

    /** The streams placed on GPU {@code gpu} now. */
    synchronized int streams(int gpu) {
        return streams[gpu];
    }
}
