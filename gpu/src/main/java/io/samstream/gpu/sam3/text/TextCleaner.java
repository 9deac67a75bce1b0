package io.samstream.gpu.sam3.text;

import java.util.Locale;

/**
 * SAM 3's text cleaning before tokenization (the tokenizer's "lower" clean): {@link TextFixer ftfy's fix_text},
 * Python's {@code html.unescape} applied twice, surrounding white space stripped, every run of white space made
 * one space, lower case.
 *
 * <p>Two notions of white space are at work, as in Meta's code: runs are found with the regex module's
 * {@code \s} (Unicode White_Space), stripping uses Python's {@code str.strip()}, which also strips the
 * information separators U+001C..U+001F.
 */
public final class TextCleaner {
    private TextCleaner() {}

    /** The cleaned, lower-cased text the byte-level BPE sees. */
    public static String clean(String text) {
        String basic = pythonStrip(HtmlCharacterReferences.unescape(
                HtmlCharacterReferences.unescape(TextFixer.fixText(text))));
        return pythonStrip(collapseWhiteSpace(basic)).toLowerCase(Locale.ROOT);
    }

    /** Unicode White_Space, the regex module's {@code \s}. */
    static boolean isWhiteSpace(int cp) {
        return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680
                || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F
                || cp == 0x3000;
    }

    /** Python's {@code str.isspace()} for one character: White_Space plus U+001C..U+001F. */
    static boolean isPythonSpace(int cp) {
        return isWhiteSpace(cp) || (cp >= 0x1C && cp <= 0x1F);
    }

    static String pythonStrip(String s) {
        int start = 0;
        int end = s.length();
        while (start < end && isPythonSpace(s.charAt(start))) {
            start++;
        }
        while (end > start && isPythonSpace(s.charAt(end - 1))) {
            end--;
        }
        return s.substring(start, end);
    }

    private static String collapseWhiteSpace(String s) {
        StringBuilder out = new StringBuilder(s.length());
        boolean inRun = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (isWhiteSpace(c)) {
                if (!inRun) {
                    out.append(' ');
                }
                inRun = true;
            } else {
                out.append(c);
                inRun = false;
            }
        }
        return out.toString();
    }
}
