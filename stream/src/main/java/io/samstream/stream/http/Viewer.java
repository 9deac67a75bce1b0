package io.samstream.stream.http;

import akka.NotUsed;
import akka.stream.OverflowStrategy;
import akka.stream.javadsl.Source;
import akka.stream.javadsl.SourceQueueWithComplete;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One live preview connection (a WebSocket, an MJPEG response, a frame.jpg request waiting for its frame): the
 * stream it watches, the width it wants, and its queue: Akka's bounded source queue with the drop-head strategy
 * ({@link #QUEUE} frames), made when the connection runs its source ({@link #source}). A viewer that reads slower than
 * frames come loses its oldest frames; nothing it does reaches the stream. Frames offered before its connection runs
 * are dropped.
 */
final class Viewer {
    /** Frames a viewer's queue holds; a newer frame pushes out the oldest. */
    static final int QUEUE = 2;

    private final String stream;
    private final int width;
    private final int size;
    private final AtomicLong offered = new AtomicLong();
    private SourceQueueWithComplete<Preview> queue;
    private boolean completed;

    Viewer(String stream, int width) {
        this(stream, width, QUEUE);
    }

    Viewer(String stream, int width, int size) {
        this.stream = stream;
        this.width = width;
        this.size = size;
    }

    /** The frames, as the connection runs them (once). */
    Source<Preview, NotUsed> source() {
        return Source.<Preview>queue(size, OverflowStrategy.dropHead(), 16).mapMaterializedValue(q -> {
            attach(q);
            return NotUsed.getInstance();
        });
    }

    private synchronized void attach(SourceQueueWithComplete<Preview> q) {
        queue = q;
        if (completed) {
            q.complete();
        }
    }

    String stream() {
        return stream;
    }

    int width() {
        return width;
    }

    /** Queues a frame (the oldest queued one goes when the queue is full); never blocks. */
    synchronized void offer(Preview p) {
        offered.incrementAndGet();
        if (queue != null && !completed) {
            queue.offer(p);
        }
    }

    /** Frames offered to it so far. */
    long offered() {
        return offered.get();
    }

    /** Ends its stream of frames (the connection closes once what is queued went out). */
    synchronized void complete() {
        completed = true;
        if (queue != null) {
            queue.complete();
        }
    }
}
