package io.samstream.gpu.sam3.text;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * ftfy's {@code fix_text} with its default settings, the first step of SAM 3's text cleaning.
 *
 * <p>The text is fixed line by line (segments ending in '\n', at most a million code points); HTML references
 * are resolved ({@link HtmlCharacterReferences#unescapeFtfy}) until a segment containing '&lt;' is met - from then
 * on, as in ftfy, no longer. Each segment is then fixed until it stops changing: references, mojibake, C1
 * controls read as Windows-1252, Latin ligatures split (ﬁ to fi), full- and half-width forms to normal width
 * (U+3000 to a space), curly quotes straightened, line breaks to '\n', lone surrogates to U+FFFD, ANSI terminal
 * escapes and invisible controls removed, and NFC normalization.
 *
 * <p>Mojibake: the text is re-encoded as Latin-1, then as ftfy's sloppy Windows-1252, and when those bytes are
 * valid UTF-8 with a multi-byte sequence the decoded text replaces it ("cafÃ©" to "café"). ftfy only tries
 * that on text its "badness" heuristic flags, and also repairs mojibake of other single-byte encodings (Windows-1250/1251/1253/1254/1257,
 * ISO-8859-2, MacRoman, CP437), lost 0xA0 bytes, CESU-8 and mixed fragments; those heuristics are not
 * reproduced here. A typed phrase is not mojibake, and the phrase fixtures (accents, CJK, emoji, entities, the
 * common UTF-8-as-Latin-1 mojibake) are byte-exact with ftfy.
 */
final class TextFixer {
    private TextFixer() {}

    private static final int MAX_SEGMENT_CODE_POINTS = 1_000_000;
    private static final Pattern ANSI_ESCAPE = Pattern.compile("\u001b\\[(?:\\p{Nd}|;)*[a-zA-Z]");
    private static final Map<Integer, String> LIGATURES = ligatures();
    private static final Map<Integer, String> WIDTH = widthMap();

    /** ftfy.fix_text(text). */
    static String fixText(String text) {
        StringBuilder out = new StringBuilder(text.length());
        boolean unescapeHtml = true;
        int pos = 0;
        while (pos < text.length()) {
            int end = text.indexOf('\n', pos) + 1;
            if (end == 0) {
                end = text.length();
            }
            if (text.codePointCount(pos, end) > MAX_SEGMENT_CODE_POINTS) {
                end = text.offsetByCodePoints(pos, MAX_SEGMENT_CODE_POINTS);
            }
            String segment = text.substring(pos, end);
            if (unescapeHtml && segment.indexOf('<') >= 0) {
                unescapeHtml = false;
            }
            out.append(fixSegment(segment, unescapeHtml));
            pos = end;
        }
        return out.toString();
    }

    private static String fixSegment(String text, boolean unescapeHtml) {
        while (true) {
            String original = text;
            if (unescapeHtml) {
                text = HtmlCharacterReferences.unescapeFtfy(text);
            }
            text = fixEncoding(text);
            text = fixC1Controls(text);
            text = translate(text, LIGATURES);
            text = translate(text, WIDTH);
            text = uncurlQuotes(text);
            text = fixLineBreaks(text);
            text = fixSurrogates(text);
            text = ANSI_ESCAPE.matcher(text).replaceAll("");
            text = removeControlChars(text);
            text = Normalizer.normalize(text, Normalizer.Form.NFC);
            if (text.equals(original)) {
                return text;
            }
        }
    }

    /** Undoes UTF-8 read as Latin-1 or Windows-1252, step by step until nothing changes. */
    static String fixEncoding(String text) {
        while (true) {
            String fixed = fixEncodingOnce(text);
            if (fixed.equals(text)) {
                return text;
            }
            text = fixed;
        }
    }

    private static String fixEncodingOnce(String text) {
        if (text.chars().allMatch(c -> c < 0x80)) {
            return text;
        }
        byte[] latin1 = encodeLatin1(text);
        if (latin1 != null) {
            String decoded = decodeUtf8(latin1);
            if (decoded != null) {
                return decoded;
            }
        }
        byte[] cp1252 = encodeWindows1252(text);
        if (cp1252 != null) {
            String decoded = decodeUtf8(cp1252);
            if (decoded != null) {
                return decoded;
            }
        }
        return text;
    }

    private static byte[] encodeLatin1(String text) {
        byte[] out = new byte[text.length()];
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c > 0xFF) {
                return null;
            }
            out[i] = (byte) c;
        }
        return out;
    }

    private static byte[] encodeWindows1252(String text) {
        byte[] out = new byte[text.length()];
        for (int i = 0; i < text.length(); i++) {
            int b = Windows1252.encode(text.charAt(i));
            if (b < 0) {
                return null;
            }
            out[i] = (byte) b;
        }
        return out;
    }

    /** Strict UTF-8 (no surrogates, no overlong forms) with at least one multi-byte sequence, or null. */
    private static String decodeUtf8(byte[] bytes) {
        boolean multiByte = false;
        for (byte b : bytes) {
            multiByte |= b < 0;
        }
        if (!multiByte) {
            return null;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static String fixC1Controls(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c >= 0x80 && c <= 0x9F) {
                if (out == null) {
                    out = new StringBuilder(text.substring(0, i));
                }
                out.append(Windows1252.decode(c));
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? text : out.toString();
    }

    private static String uncurlQuotes(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\u02BC' || (c >= '\u2018' && c <= '\u201B')) {
                out.append('\'');
            } else if (c >= '\u201C' && c <= '\u201F') {
                out.append('"');
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static String fixLineBreaks(String text) {
        return text.replace("\r\n", "\n").replace('\r', '\n').replace('\u2028', '\n').replace('\u2029', '\n')
                .replace('\u0085', '\n');
    }

    private static String fixSurrogates(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean pair = Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1));
            if (pair) {
                if (out != null) {
                    out.append(c).append(text.charAt(i + 1));
                }
                i++;
            } else if (Character.isSurrogate(c)) {
                if (out == null) {
                    out = new StringBuilder(text.substring(0, i));
                }
                out.append('\uFFFD');
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? text : out.toString();
    }

    private static String removeControlChars(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean control = c <= 0x08 || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F
                    || (c >= 0x206A && c <= 0x206F) || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFC);
            if (!control) {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static String translate(String text, Map<Integer, String> table) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            String to = table.get(cp);
            if (to != null && out == null) {
                out = new StringBuilder(text.substring(0, i));
            }
            if (out != null) {
                if (to != null) {
                    out.append(to);
                } else {
                    out.appendCodePoint(cp);
                }
            }
            i += Character.charCount(cp);
        }
        return out == null ? text : out.toString();
    }

    private static Map<Integer, String> ligatures() {
        Map<Integer, String> m = new HashMap<>();
        String[][] pairs = {
            {"\u0132", "IJ"}, {"\u0133", "ij"}, {"\u0149", "\u02BCn"}, {"\u01F1", "DZ"}, {"\u01F2", "Dz"},
            {"\u01F3", "dz"}, {"\u01C4", "D\u017D"}, {"\u01C5", "D\u017E"}, {"\u01C6", "d\u017E"},
            {"\u01C7", "LJ"}, {"\u01C8", "Lj"}, {"\u01C9", "lj"}, {"\u01CA", "NJ"}, {"\u01CB", "Nj"},
            {"\u01CC", "nj"}, {"\uFB00", "ff"}, {"\uFB01", "fi"}, {"\uFB02", "fl"}, {"\uFB03", "ffi"},
            {"\uFB04", "ffl"}, {"\uFB05", "\u017Ft"}, {"\uFB06", "st"},
        };
        for (String[] p : pairs) {
            m.put((int) p[0].charAt(0), p[1]);
        }
        return m;
    }

    /** U+3000 to a space; each of U+FF01..U+FFEF to its NFKC form where that differs. */
    private static Map<Integer, String> widthMap() {
        Map<Integer, String> m = new HashMap<>();
        m.put(0x3000, " ");
        for (int cp = 0xFF01; cp < 0xFFF0; cp++) {
            String c = new String(Character.toChars(cp));
            String alt = Normalizer.normalize(c, Normalizer.Form.NFKC);
            if (!alt.equals(c)) {
                m.put(cp, alt);
            }
        }
        return m;
    }
}
