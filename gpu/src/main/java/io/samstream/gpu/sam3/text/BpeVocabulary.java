package io.samstream.gpu.sam3.text;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * A byte-level BPE vocabulary in the format of SAM 3's {@code bpe_simple_vocab_16e6.txt.gz} (CLIP's): gzip text, a
 * header line, then one merge "left right" a line. As Meta's SimpleTokenizer builds it: lines 1 .. 48,894 are
 * the merges (later lines are ignored), the token ids are the 256 byte symbols, the same with "&lt;/w&gt;", each
 * merge's joined symbol, then {@code <start_of_text>} and {@code <end_of_text>}; a symbol listed twice keeps its
 * last id, a pair listed twice its last rank.
 */
final class BpeVocabulary {
    /** Meta's slice {@code merges[1 : 49152 - 256 - 2 + 1]}. */
    static final int MAX_MERGES = 49152 - 256 - 2;
    static final String START = "<start_of_text>";
    static final String END = "<end_of_text>";
    private static final long MAX_TEXT_BYTES = 64L << 20;

    private final Map<String, Integer> ids;
    private final String[] symbols;
    /** "left right" to merge rank. */
    private final Map<String, Integer> ranks;

    private BpeVocabulary(List<String> vocab, Map<String, Integer> ranks) {
        Map<String, Integer> map = new HashMap<>();
        for (int i = 0; i < vocab.size(); i++) {
            map.put(vocab.get(i), i);
        }
        this.ids = Collections.unmodifiableMap(map);
        this.symbols = new String[vocab.size()];
        map.forEach((s, i) -> symbols[i] = s);
        this.ranks = Collections.unmodifiableMap(ranks);
    }

    /** Reads a vocabulary file (gzip, as Meta ships it, or plain text). */
    static BpeVocabulary read(Path file) {
        byte[] raw;
        try {
            raw = readBounded(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the BPE vocabulary " + file + ": " + e.getMessage(), e);
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("the BPE vocabulary " + file + " is not UTF-8 text");
        }
        String[] lines = text.split("\n", -1);
        if (lines.length < 2) {
            throw new IllegalArgumentException("the BPE vocabulary " + file + " has no merges (" + lines.length
                    + " line)");
        }
        int last = Math.min(lines.length, MAX_MERGES + 1);
        List<String> vocab = new ArrayList<>(512 + last + 1);
        for (int i = 0; i < 256; i++) {
            vocab.add(String.valueOf(ByteAlphabet.baseSymbol(i)));
        }
        for (int i = 0; i < 256; i++) {
            vocab.add(ByteAlphabet.baseSymbol(i) + "</w>");
        }
        Map<String, Integer> ranks = new HashMap<>();
        for (int i = 1; i < last; i++) {
            List<String> parts = splitPythonWhiteSpace(lines[i]);
            vocab.add(String.join("", parts));
            if (parts.size() == 2) {
                ranks.put(parts.get(0) + " " + parts.get(1), i - 1);
            }
        }
        vocab.add(START);
        vocab.add(END);
        return new BpeVocabulary(vocab, ranks);
    }

    private static byte[] readBounded(Path file) throws IOException {
        try (InputStream file0 = Files.newInputStream(file)) {
            InputStream in = file0.markSupported() ? file0 : new java.io.BufferedInputStream(file0);
            in.mark(2);
            int b0 = in.read();
            int b1 = in.read();
            in.reset();
            if (b0 == 0x1F && b1 == 0x8B) {
                in = new GZIPInputStream(in);
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                out.write(buf, 0, n);
                if (out.size() > MAX_TEXT_BYTES) {
                    throw new IOException("more than " + (MAX_TEXT_BYTES >> 20) + " MiB of text");
                }
            }
            return out.toByteArray();
        }
    }

    /** Python's {@code str.split()}: runs of {@code isspace} characters separate, empty parts dropped. */
    private static List<String> splitPythonWhiteSpace(String line) {
        List<String> parts = new ArrayList<>(2);
        int i = 0;
        while (i < line.length()) {
            while (i < line.length() && TextCleaner.isPythonSpace(line.charAt(i))) {
                i++;
            }
            int start = i;
            while (i < line.length() && !TextCleaner.isPythonSpace(line.charAt(i))) {
                i++;
            }
            if (i > start) {
                parts.add(line.substring(start, i));
            }
        }
        return parts;
    }

    int size() {
        return symbols.length;
    }

    /** The id of a symbol; every symbol BPE can produce from a vocabulary of this format has one. */
    int id(String symbol) {
        Integer id = ids.get(symbol);
        if (id == null) {
            throw new IllegalStateException("symbol " + symbol + " is not in the vocabulary");
        }
        return id;
    }

    /** The symbol of an id, or null for an id out of range or shadowed by a later duplicate. */
    String symbol(int id) {
        return id >= 0 && id < symbols.length ? symbols[id] : null;
    }

    /** The rank of merging left and right, or -1. */
    int rank(String left, String right) {
        Integer r = ranks.get(left + " " + right);
        return r == null ? -1 : r;
    }
}
