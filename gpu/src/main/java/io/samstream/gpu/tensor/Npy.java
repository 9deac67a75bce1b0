package io.samstream.gpu.tensor;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;

/**
 * NumPy's {@code .npy} format (versions 1.0, 2.0 and 3.0 of the header) and {@code .npz} archives: how
 * reference fixtures made with PyTorch/NumPy on the GPU machine get into the Java tests, and how Java
 * results get back out for comparison.
 *
 * <p>Layout: the magic {@code \x93NUMPY}, major and minor version bytes, the header length (2 bytes
 * little-endian in 1.0, 4 bytes in 2.0 and later), an ASCII Python dict literal such as
 * {@code {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }} padded with spaces and a newline
 * so the data starts on a 64-byte boundary, then the raw elements in C order.
 *
 * <p>Only C-ordered arrays of the dtypes {@link NpyArray} lists are read; anything else is a
 * {@link NpyFormatException} that names the source and the problem.
 */
public final class Npy {
    private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
    private static final int ALIGNMENT = 64;
    private static final int GROWTH_AXIS_MAX_DIGITS = 21;

    private Npy() {}

    public static NpyArray read(Path file) throws IOException {
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file))) {
            return read(in, file.toString());
        }
    }

    /** Reads one array from {@code in}; {@code source} names it in error messages. */
    public static NpyArray read(InputStream in, String source) throws IOException {
        byte[] prefix = in.readNBytes(MAGIC.length + 2);
        if (prefix.length < MAGIC.length + 2 || !startsWithMagic(prefix)) {
            throw new NpyFormatException(source, "not a .npy file (no \\x93NUMPY magic)");
        }
        int major = prefix[6] & 0xFF;
        int minor = prefix[7] & 0xFF;
        long headerLength;
        if (major == 1) {
            byte[] len = readFully(in, 2, source, "header length");
            headerLength = (len[0] & 0xFF) | (len[1] & 0xFF) << 8;
        } else if (major == 2 || major == 3) {
            byte[] len = readFully(in, 4, source, "header length");
            headerLength = (len[0] & 0xFFL) | (len[1] & 0xFFL) << 8 | (len[2] & 0xFFL) << 16 | (len[3] & 0xFFL) << 24;
        } else {
            throw new NpyFormatException(source, "unsupported .npy format version " + major + "." + minor);
        }
        if (headerLength > 1 << 24) {
            throw new NpyFormatException(source, "implausible header length " + headerLength);
        }
        // Versions 1 and 2 are latin-1, 3 is UTF-8; the keys and values we accept are ASCII either way.
        String header = new String(readFully(in, (int) headerLength, source, "header"),
                major == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
        NpyHeader parsed = NpyHeader.parse(header, source);
        String dtype = normalizeDtype(parsed.descr(), source);
        if (parsed.fortranOrder()) {
            throw new NpyFormatException(source, "fortran_order=True is not supported; save a C-ordered array"
                    + " (np.ascontiguousarray) instead");
        }
        long bytes = dataBytes(parsed.shape(), NpyArray.itemSize(dtype), source);
        byte[] raw = readFully(in, (int) bytes, source, "data");
        if (parsed.descr().charAt(0) == '>') {
            reverseEachItem(raw, NpyArray.itemSize(dtype));
        }
        return new NpyArray(dtype, parsed.shape(), raw);
    }

    /**
     * The data's size from the header's shape, checked before anything is read: the product may not
     * overflow (found by fuzzing: a shape of large dimensions wrapped to a negative size).
     */
    private static long dataBytes(int[] shape, int itemSize, String source) throws NpyFormatException {
        long bytes = itemSize;
        for (int d : shape) {
            if (d < 0) {
                throw new NpyFormatException(source, "shape " + java.util.Arrays.toString(shape)
                        + " has a negative dimension");
            }
        }
        for (int d : shape) {
            if (d == 0) {
                return 0;
            }
            // Both factors below 2^31: the product cannot overflow; once past the limit it stays there.
            bytes = bytes > Integer.MAX_VALUE - 8 ? bytes : bytes * d;
        }
        if (bytes > Integer.MAX_VALUE - 8) {
            throw new NpyFormatException(source, "array of shape " + java.util.Arrays.toString(shape)
                    + " needs more than 2 GiB, too large to load");
        }
        return bytes;
    }

    /** Every {@code .npy} member of an {@code .npz} archive (stored or deflated), by name without {@code .npy}. */
    public static Map<String, NpyArray> readNpz(Path file) throws IOException {
        Map<String, NpyArray> arrays = new LinkedHashMap<>();
        try (ZipFile zip = new ZipFile(file.toFile())) {
            Enumeration<? extends ZipEntry> entries = zip.entries();
            while (entries.hasMoreElements()) {
                ZipEntry entry = entries.nextElement();
                String name = entry.getName();
                if (entry.isDirectory() || !name.endsWith(".npy")) {
                    continue;
                }
                try (InputStream in = new BufferedInputStream(zip.getInputStream(entry))) {
                    arrays.put(name.substring(0, name.length() - 4), read(in, file + "!" + name));
                }
            }
        } catch (ZipException e) {
            throw new NpyFormatException(file.toString(), "not a readable .npz (zip) archive: " + e.getMessage());
        }
        return Collections.unmodifiableMap(arrays);
    }

    public static void write(Path file, NpyArray array) throws IOException {
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file))) {
            write(out, array);
        }
    }

    public static void write(Path file, Tensor tensor) throws IOException {
        write(file, NpyArray.ofFloat32(tensor));
    }

    /** Writes the array as {@code np.save} does: version 1.0 when the header fits in 64 KiB, else 2.0. */
    public static void write(OutputStream out, NpyArray array) throws IOException {
        out.write(header(array));
        out.write(array.raw());
    }

    public static byte[] toBytes(NpyArray array) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            write(out, array);
        } catch (IOException e) {
            throw new IllegalStateException(e); // a ByteArrayOutputStream does not fail
        }
        return out.toByteArray();
    }

    /**
     * The header exactly as {@code np.save} writes it: keys sorted, Python reprs, spare spaces after the dict
     * so the first dimension can grow in place (NumPy's GROWTH_AXIS_MAX_DIGITS), then spaces and a newline
     * up to the next 64-byte boundary (a full 64 when already aligned, as NumPy computes it).
     */
    static byte[] header(NpyArray array) {
        int[] shape = array.shape();
        StringBuilder dict = new StringBuilder("{'descr': '").append(array.dtype())
                .append("', 'fortran_order': False, 'shape': (");
        for (int i = 0; i < shape.length; i++) {
            dict.append(i > 0 ? ", " : "").append(shape[i]);
        }
        dict.append(shape.length == 1 ? ",), }" : "), }");
        if (shape.length > 0) {
            dict.append(" ".repeat(Math.max(0, GROWTH_AXIS_MAX_DIGITS - String.valueOf(shape[0]).length())));
        }
        int major = 1;
        int prefixLength = MAGIC.length + 2 + 2;
        if (dict.length() + 1 + ALIGNMENT > 0xFFFF) {
            major = 2;
            prefixLength += 2;
        }
        int padding = ALIGNMENT - (prefixLength + dict.length() + 1) % ALIGNMENT;
        dict.append(" ".repeat(padding)).append('\n');
        byte[] text = dict.toString().getBytes(StandardCharsets.ISO_8859_1);
        byte[] out = new byte[prefixLength + text.length];
        System.arraycopy(MAGIC, 0, out, 0, MAGIC.length);
        out[6] = (byte) major;
        out[7] = 0;
        int len = text.length;
        out[8] = (byte) len;
        out[9] = (byte) (len >>> 8);
        if (major == 2) {
            out[10] = (byte) (len >>> 16);
            out[11] = (byte) (len >>> 24);
        }
        System.arraycopy(text, 0, out, prefixLength, text.length);
        return out;
    }

    private static boolean startsWithMagic(byte[] b) {
        for (int i = 0; i < MAGIC.length; i++) {
            if (b[i] != MAGIC[i]) {
                return false;
            }
        }
        return true;
    }

    /** The little-endian descr we hold for a descr from a file; '=' and '<' are the same on every JVM we run. */
    private static String normalizeDtype(String descr, String source) throws NpyFormatException {
        if (descr.length() < 2) {
            throw new NpyFormatException(source, "invalid dtype '" + descr + "'");
        }
        char order = descr.charAt(0);
        String kind = descr.substring(1);
        boolean byteSized = kind.equals("u1") || kind.equals("b1");
        String normalized = byteSized ? "|" + kind : "<" + kind;
        List<String> known = List.of(NpyArray.FLOAT16, NpyArray.FLOAT32, NpyArray.FLOAT64, NpyArray.INT32,
                NpyArray.INT64, NpyArray.UINT8, NpyArray.BOOL);
        if ("<>=|".indexOf(order) < 0 || !known.contains(normalized)) {
            throw new NpyFormatException(source, "unsupported dtype '" + descr + "' (supported: <f2 <f4 <f8 <i4 <i8 |u1 |b1)");
        }
        return normalized;
    }

    private static void reverseEachItem(byte[] raw, int itemSize) {
        for (int i = 0; i < raw.length; i += itemSize) {
            for (int a = i, b = i + itemSize - 1; a < b; a++, b--) {
                byte t = raw[a];
                raw[a] = raw[b];
                raw[b] = t;
            }
        }
    }

    private static byte[] readFully(InputStream in, int n, String source, String what) throws IOException {
        byte[] b = in.readNBytes(n);
        if (b.length < n) {
            throw new NpyFormatException(source, "truncated " + what + ": expected " + n + " bytes, found " + b.length);
        }
        return b;
    }

    /** The three keys of a .npy header dict. */
    record NpyHeader(String descr, boolean fortranOrder, int[] shape) {
        /** Parses the Python dict literal NumPy writes (with ' or " quotes, any spacing, trailing commas). */
        static NpyHeader parse(String text, String source) throws NpyFormatException {
            HeaderParser p = new HeaderParser(text.trim(), source);
            String descr = null;
            Boolean fortran = null;
            int[] shape = null;
            p.expect('{');
            while (!p.peek('}')) {
                String key = p.string();
                p.expect(':');
                switch (key) {
                    case "descr" -> {
                        if (!p.peekQuote()) {
                            throw p.error("structured dtypes are not supported (descr is not a plain type string)");
                        }
                        descr = p.string();
                    }
                    case "fortran_order" -> fortran = p.bool();
                    case "shape" -> shape = p.intTuple();
                    default -> throw p.error("unexpected key '" + key + "'");
                }
                if (!p.peek('}')) {
                    p.expect(',');
                }
            }
            p.expect('}');
            if (descr == null || fortran == null || shape == null) {
                throw p.error("header lacks one of 'descr', 'fortran_order', 'shape'");
            }
            return new NpyHeader(descr, fortran, shape);
        }
    }

    /** A cursor over the header text; just enough of Python literal syntax for .npy headers. */
    private static final class HeaderParser {
        private final String text;
        private final String source;
        private int pos;

        HeaderParser(String text, String source) {
            this.text = text;
            this.source = source;
        }

        boolean peek(char c) {
            skipSpaces();
            return pos < text.length() && text.charAt(pos) == c;
        }

        boolean peekQuote() {
            return peek('\'') || peek('"');
        }

        void expect(char c) throws NpyFormatException {
            if (!peek(c)) {
                throw error("expected '" + c + "'");
            }
            pos++;
        }

        String string() throws NpyFormatException {
            if (!peekQuote()) {
                throw error("expected a quoted string");
            }
            char quote = text.charAt(pos++);
            int end = text.indexOf(quote, pos);
            if (end < 0) {
                throw error("unterminated string");
            }
            String s = text.substring(pos, end);
            pos = end + 1;
            return s;
        }

        boolean bool() throws NpyFormatException {
            skipSpaces();
            if (text.startsWith("True", pos)) {
                pos += 4;
                return true;
            }
            if (text.startsWith("False", pos)) {
                pos += 5;
                return false;
            }
            throw error("expected True or False");
        }

        int[] intTuple() throws NpyFormatException {
            expect('(');
            List<Integer> dims = new ArrayList<>();
            while (!peek(')')) {
                int start = pos;
                while (pos < text.length() && Character.isDigit(text.charAt(pos))) {
                    pos++;
                }
                if (start == pos) {
                    throw error("expected a dimension");
                }
                long d;
                try {
                    d = Long.parseLong(text.substring(start, pos));
                } catch (NumberFormatException e) {
                    throw error("dimension too large");
                }
                if (d > Integer.MAX_VALUE) {
                    throw error("dimension " + d + " too large");
                }
                dims.add((int) d);
                if (pos < text.length() && text.charAt(pos) == 'L') {
                    pos++; // Python 2 long suffix, found in old files
                }
                if (!peek(')')) {
                    expect(',');
                }
            }
            expect(')');
            return dims.stream().mapToInt(Integer::intValue).toArray();
        }

        NpyFormatException error(String problem) {
            return new NpyFormatException(source, "bad header at character " + pos + ": " + problem
                    + " in " + text.strip());
        }

        private void skipSpaces() {
            while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
                pos++;
            }
        }
    }
}
