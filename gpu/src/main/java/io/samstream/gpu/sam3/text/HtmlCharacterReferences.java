package io.samstream.gpu.sam3.text;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTML character references as SAM 3's text cleaning resolves them, twice over:
 * <ul>
 *   <li>{@link #unescape}: Python's {@code html.unescape} - named references of the WHATWG list (with or without
 *       the ';' the list allows), the longest known prefix of an unknown name, decimal and hex numeric references
 *       with the HTML5 replacements (0x80-0x9F as Windows-1252, 0, surrogates and out-of-range numbers as
 *       U+FFFD, non-characters and most controls dropped);</li>
 *   <li>{@link #unescapeFtfy}: ftfy's {@code unescape_html} - only {@code &name;} / {@code &#...;} forms of 1 to
 *       24 ASCII letters and digits, the list's names plus the upper-case spelling of each lower-case name that
 *       means nothing else ({@code &NTILDE;} is "Ñ"), numeric ones only when they resolve.</li>
 * </ul>
 * The list is the resource {@code html5-entities.tsv} (written by tools/sam3_fixtures/make_html_entities.py from
 * Python's {@code html.entities.html5}).
 */
final class HtmlCharacterReferences {
    private HtmlCharacterReferences() {}

    private static final String RESOURCE = "html5-entities.tsv";
    /** Name (as in the list, with its ';' when it has one) to replacement text. */
    private static final Map<String, String> HTML5 = load();
    /** ftfy's table: "&name;" to replacement, upper-case variants included. */
    private static final Map<String, String> FTFY = ftfyTable();
    private static final int MAX_NAME_CODE_POINTS = 32;
    private static final int FTFY_MAX_NAME = 24;

    /** Python's {@code html.unescape(s)}. */
    static String unescape(String s) {
        if (s.indexOf('&') < 0) {
            return s;
        }
        StringBuilder out = new StringBuilder(s.length());
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c != '&') {
                out.append(c);
                i++;
                continue;
            }
            int end = matchReference(s, i + 1);
            if (end < 0) {
                out.append('&');
                i++;
                continue;
            }
            out.append(replace(s.substring(i + 1, end)));
            i = end;
        }
        return out.toString();
    }

    /** ftfy's {@code unescape_html(s)}: {@code &#?[0-9A-Za-z]{1,24};} resolved through ftfy's table. */
    static String unescapeFtfy(String s) {
        if (s.indexOf('&') < 0) {
            return s;
        }
        StringBuilder out = new StringBuilder(s.length());
        int i = 0;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (c == '&') {
                int j = i + 1;
                if (j < n && s.charAt(j) == '#') {
                    j++;
                }
                int k = j;
                while (k < n && k - j < FTFY_MAX_NAME && isAsciiAlnum(s.charAt(k))) {
                    k++;
                }
                if (k > j && k < n && s.charAt(k) == ';') {
                    String ref = s.substring(i, k + 1);
                    String known = FTFY.get(ref);
                    if (known != null) {
                        out.append(known);
                    } else if (ref.startsWith("&#")) {
                        String resolved = unescape(ref);
                        out.append(resolved.indexOf(';') >= 0 ? ref : resolved);
                    } else {
                        out.append(ref);
                    }
                    i = k + 1;
                    continue;
                }
            }
            out.append(c);
            i++;
        }
        return out.toString();
    }

    /**
     * The end of Python's {@code &(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)} group starting at
     * {@code from} (just after the '&'), or -1 when there is no reference there.
     */
    private static int matchReference(String s, int from) {
        int n = s.length();
        if (from < n && s.charAt(from) == '#') {
            int k = from + 1;
            while (k < n && isAsciiDigit(s.charAt(k))) {
                k++;
            }
            if (k > from + 1) {
                return k < n && s.charAt(k) == ';' ? k + 1 : k;
            }
            if (from + 1 < n && (s.charAt(from + 1) == 'x' || s.charAt(from + 1) == 'X')) {
                k = from + 2;
                while (k < n && Character.digit(s.charAt(k), 16) >= 0 && s.charAt(k) < 128) {
                    k++;
                }
                if (k > from + 2) {
                    return k < n && s.charAt(k) == ';' ? k + 1 : k;
                }
            }
            return -1;
        }
        int k = from;
        int count = 0;
        while (k < n && count < MAX_NAME_CODE_POINTS) {
            int cp = s.codePointAt(k);
            if (cp == '\t' || cp == '\n' || cp == '\f' || cp == ' ' || cp == '<' || cp == '&' || cp == '#'
                    || cp == ';') {
                break;
            }
            k += Character.charCount(cp);
            count++;
        }
        if (count == 0) {
            return -1;
        }
        return k < n && s.charAt(k) == ';' ? k + 1 : k;
    }

    /** Python's {@code _replace_charref} for the matched group (without the '&'). */
    private static String replace(String ref) {
        if (ref.charAt(0) == '#') {
            boolean hex = ref.length() > 1 && (ref.charAt(1) == 'x' || ref.charAt(1) == 'X');
            String digits = ref.substring(hex ? 2 : 1);
            if (digits.endsWith(";")) {
                digits = digits.substring(0, digits.length() - 1);
            }
            long num = 0;
            for (int i = 0; i < digits.length() && num <= Character.MAX_CODE_POINT; i++) {
                num = num * (hex ? 16 : 10) + Character.digit(digits.charAt(i), hex ? 16 : 10);
            }
            return numeric(num);
        }
        String value = HTML5.get(ref);
        if (value != null) {
            return value;
        }
        int cps = ref.codePointCount(0, ref.length());
        for (int x = cps - 1; x > 1; x--) {
            int cut = ref.offsetByCodePoints(0, x);
            String prefix = HTML5.get(ref.substring(0, cut));
            if (prefix != null) {
                return prefix + ref.substring(cut);
            }
        }
        return "&" + ref;
    }

    private static String numeric(long num) {
        if (num == 0) {
            return "\uFFFD";
        }
        if (num == 0x0D) {
            return "\r";
        }
        if (num >= 0x80 && num <= 0x9F) {
            return String.valueOf(Windows1252.decode((int) num));
        }
        if ((num >= 0xD800 && num <= 0xDFFF) || num > Character.MAX_CODE_POINT) {
            return "\uFFFD";
        }
        int cp = (int) num;
        if ((cp >= 0x1 && cp <= 0x8) || (cp >= 0xE && cp <= 0x1F) || cp == 0x7F || cp == 0xB
                || (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) {
            return "";
        }
        return new String(Character.toChars(cp));
    }

    private static boolean isAsciiDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isAsciiAlnum(char c) {
        return isAsciiDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    private static Map<String, String> load() {
        Map<String, String> map = new HashMap<>();
        try (InputStream in = HtmlCharacterReferences.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("resource " + RESOURCE + " is missing from the jar");
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
            for (String line; (line = r.readLine()) != null; ) {
                if (line.isEmpty()) {
                    continue;
                }
                int tab = line.indexOf('\t');
                StringBuilder value = new StringBuilder();
                for (String hex : line.substring(tab + 1).split(" ")) {
                    value.appendCodePoint(Integer.parseInt(hex, 16));
                }
                map.put(line.substring(0, tab), value.toString());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + RESOURCE, e);
        }
        return Collections.unmodifiableMap(map);
    }

    /** ftfy's HTML_ENTITIES: every ';' name, and the upper-case form of a lower-case one unless it means something. */
    private static Map<String, String> ftfyTable() {
        Map<String, String> map = new HashMap<>();
        for (Map.Entry<String, String> e : HTML5.entrySet()) {
            String name = e.getKey();
            if (!name.endsWith(";")) {
                continue;
            }
            map.put("&" + name, e.getValue());
            if (name.equals(name.toLowerCase(Locale.ROOT))) {
                String upper = "&" + name.toUpperCase(Locale.ROOT);
                if (unescape(upper).equals(upper)) {
                    map.put(upper, e.getValue().toUpperCase(Locale.ROOT));
                }
            }
        }
        return Collections.unmodifiableMap(map);
    }
}
