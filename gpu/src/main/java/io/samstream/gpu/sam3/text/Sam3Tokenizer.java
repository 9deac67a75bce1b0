package io.samstream.gpu.sam3.text;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * SAM 3's text tokenizer (Meta's {@code SimpleTokenizer}, CLIP's byte-level BPE): the text is {@link TextCleaner
 * cleaned}, split by CLIP's pattern (the two special tokens, English contractions, runs of letters, single digits,
 * runs of other non-space characters), each piece's UTF-8 bytes spelled in the {@link ByteAlphabet} and merged by
 * the vocabulary's ranked merges, lowest rank first, every occurrence left to right, until no ranked pair is left.
 *
 * <p>{@link #tokenize} frames the ids as the model reads them: {@code <start_of_text>}, the ids, {@code
 * <end_of_text>}, zero padding to the context length (32 for SAM 3's text encoder); a longer text is cut to the
 * context length and its last id replaced by {@code <end_of_text>}.
 *
 * <p>The vocabulary is not part of samstream: SAM 3's {@code bpe_simple_vocab_16e6.txt.gz} (from Meta's sam3
 * repository, {@code sam3/assets/}, under the SAM License) is read from the checkpoint's folder
 * ({@link #forCheckpoint}), unless the checkpoint has one of its own beside it ({@code <checkpoint
 * file>.vocab.txt.gz}, as the bundled demo model has). Any vocabulary in the same format works; the tests and the
 * demo model use one trained by tools/sam3_fixtures/train_test_vocab.py.
 *
 * <p>Thread-safe; a text longer than {@link #MAX_TEXT_CHARS} characters is refused.
 */
public final class Sam3Tokenizer {
    /** The file name of SAM 3's vocabulary, next to {@code sam3.pt}. */
    public static final String VOCABULARY_FILE = "bpe_simple_vocab_16e6.txt.gz";
    /** The context length of SAM 3's text encoder ({@code VETextEncoder}). */
    public static final int SAM3_CONTEXT_LENGTH = 32;
    /** The tokenizer's own default context length (CLIP's). */
    public static final int DEFAULT_CONTEXT_LENGTH = 77;
    /** The longest text accepted, in UTF-16 characters (prompts are phrases; this bounds the work per call). */
    public static final int MAX_TEXT_CHARS = 10_000;

    private static final Pattern PIECES = Pattern.compile(
            Pattern.quote(BpeVocabulary.START) + "|" + Pattern.quote(BpeVocabulary.END)
                    + "|'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+",
            Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE | Pattern.UNICODE_CHARACTER_CLASS);

    private final BpeVocabulary vocab;
    private final Path source;
    private final int start;
    private final int end;

    private Sam3Tokenizer(BpeVocabulary vocab, Path source) {
        this.vocab = vocab;
        this.source = source;
        this.start = vocab.id(BpeVocabulary.START);
        this.end = vocab.id(BpeVocabulary.END);
    }

    /** A tokenizer over the vocabulary file (gzip or plain text); a clear error when it is missing or malformed. */
    public static Sam3Tokenizer load(Path vocabularyFile) {
        if (!Files.isRegularFile(vocabularyFile)) {
            throw new IllegalArgumentException("BPE vocabulary " + vocabularyFile + " not found");
        }
        return new Sam3Tokenizer(BpeVocabulary.read(vocabularyFile), vocabularyFile);
    }

    /** The tokenizer of a SAM 3 checkpoint: {@value #VOCABULARY_FILE} in the checkpoint's folder. */
    public static Sam3Tokenizer forCheckpoint(Path checkpoint) {
        Path own = ownVocabulary(checkpoint);
        if (Files.isRegularFile(own)) {
            return load(own);
        }
        Path folder = checkpoint.toAbsolutePath().getParent();
        Path file = folder.resolve(VOCABULARY_FILE);
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("SAM 3's text vocabulary " + VOCABULARY_FILE + " is not next to "
                    + checkpoint + ": copy it there from Meta's sam3 repository (sam3/assets/" + VOCABULARY_FILE
                    + "; SAM License), or give the checkpoint its own as " + own.getFileName());
        }
        return load(file);
    }

    /** A checkpoint's own vocabulary, which {@link #forCheckpoint} prefers: {@code <checkpoint file>.vocab.txt.gz}. */
    public static Path ownVocabulary(Path checkpoint) {
        Path abs = checkpoint.toAbsolutePath();
        return abs.resolveSibling(abs.getFileName() + ".vocab.txt.gz");
    }

    public Path source() {
        return source;
    }

    public int vocabularySize() {
        return vocab.size();
    }

    public int startToken() {
        return start;
    }

    public int endToken() {
        return end;
    }

    /** The BPE ids of the cleaned text, without start and end ({@code SimpleTokenizer.encode}). */
    public int[] encode(String text) {
        return encode(text, Integer.MAX_VALUE);
    }

    /**
     * The model's input ids at {@code contextLength}: start, ids, end, zeros; cut to the context length with the
     * last id made the end token when longer ({@code SimpleTokenizer.__call__}).
     */
    public int[] tokenize(String text, int contextLength) {
        if (contextLength < 2) {
            throw new IllegalArgumentException("context length " + contextLength + " leaves no room for the start "
                    + "and end tokens");
        }
        // ids past contextLength - 1 are cut anyway: stop encoding there
        int[] ids = encode(text, contextLength - 1);
        int[] out = new int[contextLength];
        out[0] = start;
        int kept = Math.min(ids.length, contextLength - 2);
        System.arraycopy(ids, 0, out, 1, kept);
        out[kept + 1] = end;
        return out;
    }

    /** The text of ids ({@code SimpleTokenizer.decode}): symbols joined, bytes decoded, "&lt;/w&gt;" as a space. */
    public String decode(int[] ids) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int id : ids) {
            String symbol = vocab.symbol(id);
            if (symbol == null) {
                throw new IllegalArgumentException("token id " + id + " is not in the vocabulary of "
                        + vocab.size() + " (" + source + ")");
            }
            for (int i = 0; i < symbol.length(); i++) {
                int b = ByteAlphabet.byteOf(symbol.charAt(i));
                bytes.write(b < 0 ? '?' : b);
            }
        }
        return new String(bytes.toByteArray(), StandardCharsets.UTF_8).replace("</w>", " ");
    }

    private int[] encode(String text, int enough) {
        if (text.length() > MAX_TEXT_CHARS) {
            throw new IllegalArgumentException("text of " + text.length() + " characters is longer than the "
                    + MAX_TEXT_CHARS + " a prompt may have");
        }
        List<Integer> ids = new ArrayList<>();
        Matcher m = PIECES.matcher(TextCleaner.clean(text));
        while (ids.size() < enough && m.find()) {
            String piece = m.group();
            if (piece.equals(BpeVocabulary.START) || piece.equals(BpeVocabulary.END)) {
                ids.add(vocab.id(piece));
                continue;
            }
            for (String symbol : bpe(spell(piece))) {
                ids.add(vocab.id(symbol));
            }
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The piece's UTF-8 bytes as alphabet characters. */
    private static String spell(String piece) {
        byte[] utf8 = piece.getBytes(StandardCharsets.UTF_8);
        char[] chars = new char[utf8.length];
        for (int i = 0; i < utf8.length; i++) {
            chars[i] = ByteAlphabet.charOf(utf8[i]);
        }
        return new String(chars);
    }

    /** Meta's {@code bpe(token)}: the symbols of one spelled piece, its last one marked with "&lt;/w&gt;". */
    private List<String> bpe(String token) {
        List<String> word = new ArrayList<>(token.length());
        for (int i = 0; i < token.length() - 1; i++) {
            word.add(String.valueOf(token.charAt(i)));
        }
        word.add(token.charAt(token.length() - 1) + "</w>");
        while (word.size() > 1) {
            int bestRank = -1;
            String first = null;
            String second = null;
            for (int i = 0; i + 1 < word.size(); i++) {
                int r = vocab.rank(word.get(i), word.get(i + 1));
                if (r >= 0 && (bestRank < 0 || r < bestRank)) {
                    bestRank = r;
                    first = word.get(i);
                    second = word.get(i + 1);
                }
            }
            if (bestRank < 0) {
                break;
            }
            List<String> merged = new ArrayList<>(word.size());
            int i = 0;
            while (i < word.size()) {
                if (i + 1 < word.size() && word.get(i).equals(first) && word.get(i + 1).equals(second)) {
                    merged.add(first + second);
                    i += 2;
                } else {
                    merged.add(word.get(i));
                    i++;
                }
            }
            word = merged;
        }
        return word;
    }

    @Override
    public String toString() {
        return "SAM 3 tokenizer (" + vocab.size() + " ids from " + source + ")";
    }
}
