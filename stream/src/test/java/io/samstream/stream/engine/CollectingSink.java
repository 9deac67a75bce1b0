package io.samstream.stream.engine;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.video.VideoFrame;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

/** Keeps every record; when held, acknowledges nothing until {@link #release()}. */
final class CollectingSink implements FrameSink {
    final Map<String, List<MaskRecord>> records = new ConcurrentHashMap<>();
    final List<String> ended = new CopyOnWriteArrayList<>();
    /** The threads {@link #streamEnded} ran on. */
    final List<String> endedOn = new CopyOnWriteArrayList<>();
    private final ConcurrentLinkedQueue<CompletableFuture<Void>> held = new ConcurrentLinkedQueue<>();
    private volatile boolean holding;

    CollectingSink holding() {
        holding = true;
        return this;
    }

    @Override
    public CompletionStage<Void> accept(MaskRecord record, VideoFrame frame) {
        records.computeIfAbsent(record.stream(), k -> new CopyOnWriteArrayList<>()).add(record);
        if (!holding) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        held.add(f);
        if (!holding) {
            release();
        }
        return f;
    }

    int accepted() {
        return records.values().stream().mapToInt(List::size).sum();
    }

    List<MaskRecord> of(String stream) {
        return new ArrayList<>(records.getOrDefault(stream, List.of()));
    }

    void release() {
        holding = false;
        CompletableFuture<Void> f;
        while ((f = held.poll()) != null) {
            f.complete(null);
        }
    }

    @Override
    public void streamEnded(String streamId) {
        endedOn.add(Thread.currentThread().getName());
        ended.add(streamId);
    }
}
