package io.samstream.config;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the docs tests need of Markdown: the links a page makes (outside code) and the anchors its headings get,
 * as GitHub renders them. Not a Markdown parser: fenced blocks, code spans, inline links, reference definitions
 * and HTML {@code href}/{@code src} attributes, which is what the project's pages use.
 */
final class MarkdownLinks {
    /** A link target and the 1-based line it is on. */
    record Link(String target, int line) {}

    private static final Pattern FENCE = Pattern.compile("^ {0,3}(```+|~~~+)");
    private static final Pattern HEADING = Pattern.compile("^ {0,3}#{1,6}[ \\t]+(.*?)(?:[ \\t]+#+)?[ \\t]*$");
    private static final Pattern INLINE = Pattern.compile(
            "\\[([^\\]]*)\\]\\(\\s*(<[^>]*>|[^)\\s]+)(?:\\s+(?:\"[^\"]*\"|'[^']*'))?\\s*\\)");
    private static final Pattern DEFINITION = Pattern.compile("(?m)^ {0,3}\\[[^\\]]+\\]:[ \\t]*(<[^>]*>|\\S+)");
    private static final Pattern HTML = Pattern.compile("(?i)\\b(?:href|src)\\s*=\\s*\"([^\"]*)\"");
    private static final Pattern INLINE_LINK_TEXT = Pattern.compile("!?\\[([^\\]]*)\\]\\([^)]*\\)");
    /** GitHub drops every character of a heading but letters, marks, digits, connectors, spaces and hyphens. */
    private static final Pattern NOT_SLUG = Pattern.compile("[^\\p{L}\\p{M}\\p{N}\\p{Pc} \\-]");
    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

    private MarkdownLinks() {}

    /** Every link of {@code markdown} outside fenced blocks and code spans, in order. */
    static List<Link> links(String markdown) {
        String text = withoutCode(markdown);
        List<Link> links = new ArrayList<>();
        for (Pattern p : List.of(INLINE, DEFINITION, HTML)) {
            Matcher m = p.matcher(text);
            while (m.find()) {
                int group = p == INLINE ? 2 : 1;
                String target = m.group(group);
                if (target.startsWith("<") && target.endsWith(">")) {
                    target = target.substring(1, target.length() - 1);
                }
                links.add(new Link(target, lineOf(text, m.start(group))));
            }
        }
        links.sort((a, b) -> Integer.compare(a.line(), b.line()));
        return links;
    }

    /** Whether {@code target} leaves the repository (a scheme such as https: or mailto:, or //host). */
    static boolean isExternal(String target) {
        return SCHEME.matcher(target).find() || target.startsWith("//");
    }

    /** The path part of a relative target, %-decoded; empty for a link to an anchor of the same page. */
    static String path(String target) {
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        int query = path.indexOf('?');
        path = query < 0 ? path : path.substring(0, query);
        return URLDecoder.decode(path.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** The anchor of a target, without its '#'; empty when it has none. */
    static String anchor(String target) {
        int hash = target.indexOf('#');
        return hash < 0 ? "" : target.substring(hash + 1);
    }

    /** The anchors of the page's headings, as GitHub makes them (a repeated one gets -1, -2, ...). */
    static Set<String> anchors(String markdown) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        String fence = null;
        for (String line : markdown.split("\n", -1)) {
            Matcher f = FENCE.matcher(line);
            if (f.find()) {
                String marker = f.group(1);
                if (!fenced) {
                    fenced = true;
                    fence = marker;
                } else if (marker.charAt(0) == fence.charAt(0) && marker.length() >= fence.length()) {
                    fenced = false;
                }
                continue;
            }
            Matcher h = HEADING.matcher(line);
            if (!fenced && h.matches()) {
                String slug = slug(h.group(1));
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(n == 0 ? slug : slug + "-" + n);
            }
        }
        return anchors;
    }

    /** GitHub's anchor for a heading's text: its rendered text lower-cased, punctuation dropped, spaces to hyphens. */
    static String slug(String heading) {
        String text = INLINE_LINK_TEXT.matcher(heading).replaceAll("$1").replaceAll("<[^>]*>", "");
        return NOT_SLUG.matcher(text.trim().toLowerCase(Locale.ROOT)).replaceAll("").replace(' ', '-');
    }

    /** The text with fenced blocks and code spans blanked out (same length, same line breaks). */
    static String withoutCode(String markdown) {
        char[] out = markdown.toCharArray();
        String[] lines = markdown.split("\n", -1);
        int offset = 0;
        boolean fenced = false;
        String fence = null;
        for (String line : lines) {
            Matcher f = FENCE.matcher(line);
            boolean marker = f.find();
            boolean blank = fenced || marker;
            if (marker) {
                if (!fenced) {
                    fenced = true;
                    fence = f.group(1);
                } else if (f.group(1).charAt(0) == fence.charAt(0) && f.group(1).length() >= fence.length()) {
                    fenced = false;
                }
            }
            if (blank) {
                for (int i = 0; i < line.length(); i++) {
                    out[offset + i] = ' ';
                }
            }
            offset += line.length() + 1;
        }
        blankCodeSpans(out);
        return new String(out);
    }

    /** A run of N backticks opens a code span that the next run of exactly N closes; both and all between go. */
    private static void blankCodeSpans(char[] text) {
        int i = 0;
        while (i < text.length) {
            if (text[i] != '`') {
                i++;
                continue;
            }
            int run = runLength(text, i);
            int close = i + run;
            int end = -1;
            while (close < text.length) {
                if (text[close] == '`') {
                    int r = runLength(text, close);
                    if (r == run) {
                        end = close + r;
                        break;
                    }
                    close += r;
                } else {
                    close++;
                }
            }
            if (end < 0) {
                i += run; // an unmatched run is literal text
                continue;
            }
            for (int k = i; k < end; k++) {
                if (text[k] != '\n') {
                    text[k] = ' ';
                }
            }
            i = end;
        }
    }

    private static int runLength(char[] text, int from) {
        int n = 0;
        while (from + n < text.length && text[from + n] == '`') {
            n++;
        }
        return n;
    }

    private static int lineOf(String text, int offset) {
        int line = 1;
        for (int i = 0; i < offset; i++) {
            if (text.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }
}
