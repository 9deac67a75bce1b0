package io.samstream.stream.http;

import akka.stream.javadsl.SourceQueueWithComplete;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One live preview connection (a WebSocket, an MJPEG response, a frame.jpg request waiting for its frame): the
 * stream it watches, the width it wants, and its queue. The queue is Akka's bounded source queue with the drop-head
 * strategy ({@link #QUEUE} frames): a viewer that reads slower than frames come loses its oldest frames, and nothing it
 * does reaches the stream.
 */
final class Viewer {
    /** Frames a viewer's queue holds; a newer frame pushes out the oldest. */
    static final int QUEUE = 2;

    private final String stream;
    private final int width;
    private final SourceQueueWithComplete<Preview> queue;
    private final AtomicLong offered = new AtomicLong();

    Viewer(String stream, int width, SourceQueueWithComplete<Preview> queue) {
        this.stream = stream;
        this.width = width;
        this.queue = queue;
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
        queue.offer(p);
    }

    /** Frames queued for it so far. */
    long offered() {
        return offered.get();
    }

    /** Ends its stream of frames (the connection closes once what is queued went out). */
    void complete() {
        queue.complete();
    }
}
