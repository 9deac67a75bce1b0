package io.samstream.connectors.sink;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Appends mask records, one JSON document per line, by convention to {@value #FILE_NAME}.
 *
 * <p>Each {@link #write} hands its line to the operating system at once (no buffering across
 * records), so a crash of the JVM loses at most the record being written; it does not fsync, so a
 * power cut may lose what the OS had not written yet. An existing file is appended to; if it ends in
 * a partial line (a crash or {@code kill -9} mid-write) that line is cut off first, so the file holds
 * only whole lines: {@link #earlier()} says what the file held and what was cut.
 *
 * <p>Records are taken already serialized (UTF-8 JSON of the mask record format) and must not
 * contain a line break. Thread-safe: streams may share one file; lines never interleave.
 */
public final class JsonLinesWriter implements AutoCloseable {
    public static final String FILE_NAME = "masks.jsonl";

    private final Path file;
    private final OutputStream out;
    private final Earlier earlier;
    private long records;
    private boolean closed;

    /**
     * What the file held when it was opened.
     *
     * @param lines    whole lines (records of earlier runs)
     * @param lastLine the last whole line (UTF-8, without its newline), empty when none
     * @param cutBytes the bytes of a partial last line cut off (0 when the file ended cleanly)
     */
    public record Earlier(long lines, byte[] lastLine, long cutBytes) {
        static final Earlier NONE = new Earlier(0, new byte[0], 0);
    }

    private JsonLinesWriter(Path file, OutputStream out, Earlier earlier) {
        this.file = file;
        this.out = out;
        this.earlier = earlier;
    }

    /** Opens the file for appending, creating it and its directories if needed. */
    public static JsonLinesWriter open(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Earlier earlier = cutPartialLine(file);
        OutputStream out = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                StandardOpenOption.WRITE);
        return new JsonLinesWriter(file, out, earlier);
    }

    /** What the file held when opened: earlier runs' lines and a partial line that was cut. */
    public Earlier earlier() {
        return earlier;
    }

    /** Appends one record (UTF-8 JSON without line breaks) and its newline. */
    public synchronized void write(byte[] utf8Json) throws IOException {
        if (closed) {
            throw new IOException(file + ": writer is closed");
        }
        for (byte b : utf8Json) {
            if (b == '\n' || b == '\r') {
                throw new IllegalArgumentException(file + ": a JSON lines record must not contain a line break");
            }
        }
        byte[] line = new byte[utf8Json.length + 1];
        System.arraycopy(utf8Json, 0, line, 0, utf8Json.length);
        line[utf8Json.length] = '\n';
        out.write(line); // one write call: the line reaches the file whole or, on a crash, in part at the end
        records++;
    }

    /** Appends one record given as a string. */
    public void write(String json) throws IOException {
        write(json.getBytes(StandardCharsets.UTF_8));
    }

    public synchronized long recordsWritten() {
        return records;
    }

    public Path file() {
        return file;
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        out.close();
    }

    /** Counts the whole lines, keeps the last, and truncates the file after the last newline. */
    private static Earlier cutPartialLine(Path file) throws IOException {
        if (!Files.isRegularFile(file) || Files.size(file) == 0) {
            return Earlier.NONE;
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long length = channel.size();
            long lines = 0;
            long lastNewline = -1;
            long previousNewline = -1;
            ByteBuffer buffer = ByteBuffer.allocate(1 << 16);
            for (long at = 0; at < length; ) {
                buffer.clear();
                int n = channel.read(buffer, at);
                if (n <= 0) {
                    break;
                }
                for (int i = 0; i < n; i++) {
                    if (buffer.get(i) == '\n') {
                        lines++;
                        previousNewline = lastNewline;
                        lastNewline = at + i;
                    }
                }
                at += n;
            }
            long keep = lastNewline + 1;
            byte[] last = new byte[0];
            if (lastNewline >= 0) {
                long start = previousNewline + 1;
                long size = lastNewline - start;
                if (size <= MAX_LAST_LINE) {
                    ByteBuffer line = ByteBuffer.allocate((int) size);
                    while (line.hasRemaining() && channel.read(line, start + line.position()) > 0) {
                        // reads the whole line
                    }
                    last = line.array();
                }
            }
            if (keep < length) {
                channel.truncate(keep);
                channel.force(false);
            }
            return new Earlier(lines, last, length - keep);
        }
    }

    /** The last line is kept for what it says (its frame); a longer one is not held in memory. */
    private static final long MAX_LAST_LINE = 64L << 20;
}
