package io.samstream.gpu.sam3.text;

/**
 * ftfy's "sloppy" Windows-1252: Windows-1252 where the five bytes it leaves undefined (0x81, 0x8D, 0x8F, 0x90,
 * 0x9D) stand for the Latin-1 control characters of the same value, and byte 0x1A for U+FFFD.
 */
final class Windows1252 {
    private Windows1252() {}

    /** Characters of bytes 0x80..0x9F; bytes 0xA0..0xFF are Latin-1. */
    private static final char[] HIGH = {
        '\u20AC', '\u0081', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
        '\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008D', '\u017D', '\u008F',
        '\u0090', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
        '\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '\u009D', '\u017E', '\u0178',
    };

    /** The character of byte b (0..255). */
    static char decode(int b) {
        if (b == 0x1A) {
            return '\uFFFD';
        }
        return b >= 0x80 && b <= 0x9F ? HIGH[b - 0x80] : (char) b;
    }

    /** The byte of character c, or -1 when c has none. */
    static int encode(char c) {
        if (c == '\uFFFD') {
            return 0x1A;
        }
        if (c < 0x80) {
            return c == 0x1A ? -1 : c;
        }
        if (c >= 0xA0 && c <= 0xFF) {
            return c;
        }
        for (int i = 0; i < HIGH.length; i++) {
            if (HIGH[i] == c) {
                return 0x80 + i;
            }
        }
        return -1;
    }
}
