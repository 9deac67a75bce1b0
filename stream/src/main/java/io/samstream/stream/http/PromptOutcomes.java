package io.samstream.stream.http;

import io.samstream.stream.engine.PromptRejected;
import io.samstream.stream.engine.PromptsTopicWatcher;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * What this engine made of the prompt messages the API sent through the prompts topic, by their place on it
 * (partition, offset): the {@link PromptsTopicWatcher.Outcomes} the watcher tells, matched with the API call waiting
 * for it. The watcher may handle a message before its producer's acknowledgement reaches the API, so the last
 * {@link #REMEMBERED} outcomes are kept for a waiter that comes late.
 */
final class PromptOutcomes implements PromptsTopicWatcher.Outcomes {
    static final int REMEMBERED = 1024;

    /** A message's outcome: the frame it applies from, or why it was rejected. */
    record Outcome(long from, PromptRejected rejected) {}

    private record Place(int partition, long offset) {}

    private final Map<Place, CompletableFuture<Outcome>> waiting = new LinkedHashMap<>();
    private final Map<Place, Outcome> recent = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Place, Outcome> eldest) {
            return size() > REMEMBERED;
        }
    };

    @Override
    public synchronized void handled(int partition, long offset, long from, PromptRejected rejected) {
        Place p = new Place(partition, offset);
        Outcome o = new Outcome(from, rejected);
        CompletableFuture<Outcome> f = waiting.remove(p);
        if (f != null) {
            f.complete(o);
        } else {
            recent.put(p, o);
        }
    }

    /** The outcome of the message at {@code partition}/{@code offset}, once this engine handled it. */
    synchronized CompletableFuture<Outcome> of(int partition, long offset) {
        Place p = new Place(partition, offset);
        Outcome o = recent.remove(p);
        if (o != null) {
            return CompletableFuture.completedFuture(o);
        }
        CompletableFuture<Outcome> f = new CompletableFuture<>();
        waiting.put(p, f);
        // A waiter that gives up leaves no entry behind.
        f.whenComplete((x, e) -> forget(p, f));
        return f;
    }

    private synchronized void forget(Place p, CompletableFuture<Outcome> f) {
        waiting.remove(p, f);
    }
}
