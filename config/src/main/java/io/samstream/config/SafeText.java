package io.samstream.config;

import java.util.regex.Pattern;

/**
 * The one place text from outside is made fit for a log line, a metric label, an error or an API answer.
 *
 * <ul>
 *   <li>{@link #maskCredentials}: a URL's password ({@code rtsp://admin:s3cret@host} becomes
 *       {@code rtsp://admin:***@host}) or lone user name, often a token ({@code https://TOKEN@host} becomes
 *       {@code https://***@host}), and the values of the values of query parameters that carry
 *       secrets ({@code ?password=}, {@code token}, {@code key}, {@code signature}, ...), wherever in the text
 *       they are: a stream's location, an FFmpeg message, an exception's text;</li>
 *   <li>{@link #of}: credentials masked, then cut (with the original length) and escaped ({@link OneLine}), so
 *       no value can forge a log line or flood the log.</li>
 * </ul>
 * Masking runs on the whole text before it is cut, so that a cut never leaves the start of a secret behind.
 */
public final class SafeText {
    /** What a value is cut to by default. */
    public static final int MAX_CHARS = 200;
    /** What stands for a masked secret. */
    public static final String MASK = "***";

    /**
     * {@code scheme://user:password@} (the password may hold {@code @}: up to the authority's last one) or
     * {@code scheme://user@}.
     */
    private static final Pattern USER_INFO = Pattern.compile(
            "([a-zA-Z][a-zA-Z0-9+.-]*://)([^:/?#@\\s]*)(:[^/?#\\s]*)?@");
    /** {@code ?name=value} / {@code &name=value} / {@code ;name=value} whose name says it is a secret. */
    private static final Pattern SECRET_PARAMETER = Pattern.compile("(?i)([?&;](?:[a-z0-9_.-]*[_.-])?"
            + "(?:pass|passwd|password|passphrase|pwd|secret|token|auth|authorization|key|apikey|api_key|sig|signature"
            + "|credential|credentials|session|security-token)=)[^&#\\s]*");

    private SafeText() {}

    /** {@code text} with every URL's user information and every secret query parameter's value masked. */
    public static String maskCredentials(String text) {
        if (text == null) {
            return null;
        }
        if (text.indexOf('@') < 0 && text.indexOf('=') < 0) {
            return text; // the common case: nothing to look at
        }
        // user:password keeps the user (which account), a user alone is often a token: masked whole.
        String s = USER_INFO.matcher(text).replaceAll(m -> java.util.regex.Matcher.quoteReplacement(
                m.group(3) != null ? m.group(1) + m.group(2) + ":" + MASK + "@" : m.group(1) + MASK + "@"));
        return SECRET_PARAMETER.matcher(s).replaceAll("$1" + MASK);
    }

    /** {@code value} masked, cut to {@link #MAX_CHARS} and escaped; {@code "null"} for null. */
    public static String of(Object value) {
        return of(value, MAX_CHARS);
    }

    /** {@code value} masked, cut to {@code max} characters (then followed by "... (N chars)") and escaped. */
    public static String of(Object value, int max) {
        if (value == null) {
            return "null";
        }
        String s = maskCredentials(value.toString());
        String cut = s.length() > max ? s.substring(0, max) : s;
        String safe = OneLine.escape(cut);
        return s.length() > max ? safe + "... (" + s.length() + " chars)" : safe;
    }
}
