package io.samstream.connectors.sink;

import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
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
 * a partial line (a crash mid-write), a newline is added first so the next record starts clean.
 *
 * <p>Records are taken already serialized (UTF-8 JSON of the mask record format) and must not
 * contain a line break. Thread-safe: streams may share one file; lines never interleave.
 */
public final class JsonLinesWriter implements AutoCloseable {
    public static final String FILE_NAME = "masks.jsonl";

    private final Path file;
    private final OutputStream out;
    private long records;
    private boolean closed;

    private JsonLinesWriter(Path file, OutputStream out) {
        this.file = file;
        this.out = out;
    }

    /** Opens the file for appending, creating it and its directories if needed. */
    public static JsonLinesWriter open(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        boolean needsNewline = endsInPartialLine(file);
        OutputStream out = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                StandardOpenOption.WRITE);
        if (needsNewline) {
            out.write('\n');
            out.flush();
        }
        return new JsonLinesWriter(file, out);
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

    private static boolean endsInPartialLine(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            return false;
        }
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r")) {
            long length = raf.length();
            if (length == 0) {
                return false;
            }
            raf.seek(length - 1);
            return raf.read() != '\n';
        }
    }
}
