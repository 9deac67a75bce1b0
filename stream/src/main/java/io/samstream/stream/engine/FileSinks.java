package io.samstream.stream.engine;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import io.samstream.connectors.sink.JsonLinesWriter;
import io.samstream.connectors.sink.ObjectMask;
import io.samstream.connectors.sink.OverlayVideoWriter;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.mask.CocoRle;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per stream, {@code masks.jsonl} (the mask records, one per line) and/or {@code overlay.mp4} (the frames
 * with their masks drawn, a colour per object id; {@code overlay-0001.mp4}, ... after each change of the
 * frame size: {@link OverlayVideoWriter}). Files are opened at a stream's first record and
 * closed when it ends. Called from the engine's one sink thread.
 */
public final class FileSinks implements FrameSink {
    private static final Logger log = LoggerFactory.getLogger(FileSinks.class);
    /** The overlay's nominal rate when a stream's timestamps do not tell (a single frame). */
    private static final double DEFAULT_FPS = 25;

    private final Function<String, Optional<Path>> jsonlPath;
    private final Function<String, Optional<Path>> overlayPath;
    private final Map<String, Files> open = new ConcurrentHashMap<>();

    /**
     * @param jsonlPath   the masks.jsonl of a stream id, or empty for none
     * @param overlayPath the overlay.mp4 of a stream id, or empty for none
     */
    public FileSinks(Function<String, Optional<Path>> jsonlPath, Function<String, Optional<Path>> overlayPath) {
        this.jsonlPath = jsonlPath;
        this.overlayPath = overlayPath;
    }

    /** {@code jsonlDir/<stream>/masks.jsonl} and {@code overlayDir/<stream>/overlay.mp4}. */
    public static FileSinks underFolders(Optional<Path> jsonlDir, Optional<Path> overlayDir) {
        return new FileSinks(id -> jsonlDir.map(d -> d.resolve(id).resolve(JsonLinesWriter.FILE_NAME)),
                id -> overlayDir.map(d -> d.resolve(id).resolve(OverlayVideoWriter.FILE_NAME)));
    }

    @Override
    public CompletionStage<Void> accept(MaskRecord record, VideoFrame frame) {
        try {
            Files f = open.computeIfAbsent(record.stream(), id -> new Files(id, jsonlPath.apply(id),
                    overlayPath.apply(id)));
            f.write(record, frame);
            return CompletableFuture.completedFuture(null);
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public void streamEnded(String streamId) {
        Files f = open.remove(streamId);
        if (f != null) {
            f.close();
        }
    }

    @Override
    public void close() {
        for (String id : List.copyOf(open.keySet())) {
            streamEnded(id);
        }
    }

    /** One stream's open files. */
    private static final class Files {
        final String id;
        final Optional<Path> jsonl;
        final Optional<Path> overlay;
        JsonLinesWriter lines;
        OverlayVideoWriter video;
        /** The first frame waits for the second, whose pts gives the overlay's frame rate. */
        VideoFrame firstFrame;
        MaskRecord firstRecord;

        Files(String id, Optional<Path> jsonl, Optional<Path> overlay) {
            this.id = id;
            this.jsonl = jsonl;
            this.overlay = overlay;
        }

        void write(MaskRecord record, VideoFrame frame) throws IOException {
            if (jsonl.isPresent()) {
                if (lines == null) {
                    lines = JsonLinesWriter.open(jsonl.get());
                    log.info("stream {}: writing {}", id, jsonl.get());
                    sayWhatRepeats(lines.earlier(), record.frame());
                }
                lines.write(MaskRecordJson.write(record));
            }
            if (overlay.isPresent()) {
                if (video == null && firstFrame == null) {
                    firstFrame = frame;
                    firstRecord = record;
                    return;
                }
                if (video == null) {
                    long dt = frame.ptsMillis() - firstFrame.ptsMillis();
                    openVideo(dt > 0 ? 1000.0 / dt : DEFAULT_FPS);
                }
                video.write(frame, masks(record));
            }
        }

        /**
         * A run does not resume where an earlier one stopped (after a crash or kill): it starts at its
         * stream's first frame and appends, so the frames the file holds already come again. Says so.
         */
        private void sayWhatRepeats(JsonLinesWriter.Earlier earlier, long firstFrame) {
            if (earlier.cutBytes() > 0) {
                log.warn("stream {}: {} ended in a partial line ({} bytes, an earlier run was killed mid-record):"
                        + " cut off, the file holds only whole lines", id, jsonl.get(), earlier.cutBytes());
            }
            if (earlier.lines() == 0) {
                return;
            }
            String last = "";
            try {
                MaskRecord r = MaskRecordJson.read(earlier.lastLine());
                last = ", the last for frame " + r.frame();
                if (r.frame() >= firstFrame) {
                    last += "; this run starts at frame " + firstFrame + ", so frames " + firstFrame + ".." + r.frame()
                            + " are written again after them (per frame, the last record is this run's)";
                }
            } catch (RuntimeException e) {
                last = " (the last is not a mask record: " + LogSafe.of(e.getMessage()) + ")";
            }
            log.warn("stream {}: {} already holds {} records of an earlier run{}; appending", id, jsonl.get(),
                    earlier.lines(), last);
        }

        private void openVideo(double fps) throws IOException {
            // A video cannot be appended to like masks.jsonl: the writer keeps an earlier run's file under
            // another name (overlay.1.mp4), and starts a new segment (overlay-0001.mp4) when the frame size changes.
            video = new OverlayVideoWriter(overlay.get(), id, fps);
            log.info("stream {}: writing {}", id, overlay.get());
            VideoFrame f = firstFrame;
            firstFrame = null;
            video.write(f, masks(firstRecord));
            firstRecord = null;
        }

        private static List<ObjectMask> masks(MaskRecord r) {
            List<ObjectMask> out = new ArrayList<>(r.objects().size());
            for (MaskRecord.ObjectMask o : r.objects()) {
                out.add(new ObjectMask(Integer.toString(o.id()),
                        CocoRle.decode(o.mask().counts(), o.mask().height(), o.mask().width())));
            }
            return out;
        }

        void close() {
            try {
                if (overlay.isPresent() && video == null && firstFrame != null) {
                    openVideo(DEFAULT_FPS);
                }
            } catch (IOException | RuntimeException e) {
                log.warn("stream {}: overlay: {}", id, e.getMessage());
            }
            for (AutoCloseable c : new AutoCloseable[] {lines, video}) {
                if (c != null) {
                    try {
                        c.close();
                    } catch (Exception e) {
                        log.warn("stream {}: closing {}: {}", id, c.getClass().getSimpleName(), e.getMessage());
                    }
                }
            }
        }
    }
}
