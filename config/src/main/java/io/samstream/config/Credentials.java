package io.samstream.config;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Keeps credentials of stream locations out of everything the engine shows: logs, metrics, errors and API answers.
 * The one masking function of the project; whatever prints a location prints {@link #mask}'s result.
 */
public final class Credentials {
    /** What a secret is replaced with. */
    public static final String MASK = "***";
    /** Query parameters whose values are secrets: passwords, tokens, keys, signatures (signed URLs), sessions. */
    private static final Pattern SECRET_PARAMETER = Pattern.compile(
            "(?i).*(pass|pwd|token|secret|key|sig|auth|cred|session).*");

    private Credentials() {}

    /**
     * {@code location} with its credentials masked: a URL's user information (user name and password, up to the last
     * {@code @} before its query) becomes {@code ***} ({@code rtsp://***@10.0.0.5/live}), and the values of query
     * parameters named like secrets ({@code password}, {@code token}, {@code api_key}, {@code X-Amz-Signature}, ...)
     * too. Files, cameras and test patterns have none and come back as they are. Over-masks rather than leaks: an
     * {@code @} in a URL's path counts as the end of user information.
     */
    public static String mask(String location) {
        if (location == null) {
            return null;
        }
        int scheme = location.indexOf("://");
        if (scheme < 0) {
            return location;
        }
        int authority = scheme + 3;
        int queryStart = firstOf(location, authority, '?', '#');
        String head = location.substring(0, queryStart);
        String tail = location.substring(queryStart);
        int at = head.lastIndexOf('@');
        if (at >= authority) {
            head = head.substring(0, authority) + MASK + head.substring(at);
        }
        return head + maskQuery(tail);
    }

    /** Whether {@link #mask} changes {@code location}. */
    public static boolean hasCredentials(String location) {
        return location != null && !mask(location).equals(location);
    }

    private static String maskQuery(String tail) {
        if (!tail.startsWith("?")) {
            return tail;
        }
        int fragment = tail.indexOf('#');
        String query = fragment < 0 ? tail.substring(1) : tail.substring(1, fragment);
        StringBuilder out = new StringBuilder("?");
        String[] pairs = query.split("&", -1);
        for (int i = 0; i < pairs.length; i++) {
            if (i > 0) {
                out.append('&');
            }
            String pair = pairs[i];
            int eq = pair.indexOf('=');
            String name = eq < 0 ? pair : pair.substring(0, eq);
            if (eq >= 0 && SECRET_PARAMETER.matcher(name.toLowerCase(Locale.ROOT)).matches()) {
                out.append(name).append('=').append(MASK);
            } else {
                out.append(pair);
            }
        }
        return out + (fragment < 0 ? "" : tail.substring(fragment));
    }

    private static int firstOf(String s, int from, char a, char b) {
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == a || c == b) {
                return i;
            }
        }
        return s.length();
    }
}
