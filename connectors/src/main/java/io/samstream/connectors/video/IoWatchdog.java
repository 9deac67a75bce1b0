package io.samstream.connectors.video;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.bytedeco.ffmpeg.avformat.AVFormatContext;
import org.bytedeco.ffmpeg.avformat.AVIOInterruptCB;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;

/**
 * FFmpeg's interrupt callback for one input: makes a blocking open or read give up (with
 * AVERROR_EXIT) when its deadline passes or when the source is closed from another thread.
 *
 * <p>The protocol options (rw_timeout, RTSP's timeout) cover most stalls; this is the backstop for
 * the rest (a server that trickles bytes, an HLS playlist that never updates, a probe that never
 * ends), and FFmpeg polls it at least every 100 ms while it waits on a socket.
 *
 * <p>JavaCPP callbacks are native trampolines of which a class has only a few, so one callback
 * serves every input and finds its watchdog by the address of a one-byte tag passed as FFmpeg's
 * opaque pointer.
 */
final class IoWatchdog implements AutoCloseable {
    private static final Map<Long, IoWatchdog> BY_TAG = new ConcurrentHashMap<>();
    private static final Callback CALLBACK = new Callback();

    private final BytePointer tag = new BytePointer(1);
    private volatile long deadlineNanos;
    private volatile Duration armedFor;
    private volatile boolean aborted;
    /** The timeout that fired, kept: an interrupted FFmpeg input keeps failing with AVERROR_EXIT. */
    private volatile Duration firedAfter;

    IoWatchdog() {
        BY_TAG.put(tag.address(), this);
    }

    /** Installs the callback on a context, before avformat_open_input. */
    void attachTo(AVFormatContext context) {
        AVIOInterruptCB interrupt = context.interrupt_callback();
        interrupt.callback(CALLBACK);
        interrupt.opaque(tag);
    }

    /** Interrupts whatever FFmpeg starts from now on after {@code timeout}. */
    void arm(Duration timeout) {
        deadlineNanos = System.nanoTime() + timeout.toNanos();
        armedFor = timeout;
    }

    void disarm() {
        armedFor = null;
    }

    /** Interrupts the current and every later operation; safe from any thread. */
    void abort() {
        aborted = true;
    }

    boolean aborted() {
        return aborted;
    }

    /** The timeout that interrupted an operation of this input, or null if none did. */
    Duration firedAfter() {
        return firedAfter;
    }

    private boolean shouldInterrupt() {
        if (aborted) {
            return true;
        }
        Duration timeout = armedFor;
        if (timeout != null && System.nanoTime() - deadlineNanos > 0) {
            firedAfter = timeout;
            return true;
        }
        return false;
    }

    @Override
    public void close() {
        BY_TAG.remove(tag.address());
        tag.close();
    }

    private static final class Callback extends AVIOInterruptCB.Callback_Pointer {
        @Override
        public int call(Pointer opaque) {
            IoWatchdog watchdog = opaque == null ? null : BY_TAG.get(opaque.address());
            return watchdog != null && watchdog.shouldInterrupt() ? 1 : 0;
        }
    }
}
