package io.samstream.gpu.sam3.text;

/**
 * The byte-to-character alphabet of byte-level BPE ({@code bytes_to_unicode}): the printable bytes '!'..'~',
 * '¡'..'¬' and '®'..'ÿ' stand for themselves, the other 68 bytes (controls, space, 0x7F..0xA0, 0xAD) for
 * U+0100.. in byte order, so that every byte is a visible, non-space character.
 */
final class ByteAlphabet {
    private ByteAlphabet() {}

    /** CHARS[b]: the character of byte b. */
    private static final char[] CHARS = new char[256];
    /** The bytes in the order of Python's dict: the printable ones, then the others. */
    private static final int[] ORDER = new int[256];

    static {
        int k = 0;
        boolean[] printable = new boolean[256];
        for (int b = 0; b < 256; b++) {
            printable[b] = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            if (printable[b]) {
                CHARS[b] = (char) b;
                ORDER[k++] = b;
            }
        }
        int n = 0;
        for (int b = 0; b < 256; b++) {
            if (!printable[b]) {
                CHARS[b] = (char) (256 + n++);
                ORDER[k++] = b;
            }
        }
    }

    static char charOf(int b) {
        return CHARS[b & 0xFF];
    }

    /** The byte a character stands for, or -1. */
    static int byteOf(char c) {
        if (c < 256) {
            return CHARS[c] == c ? c : -1;
        }
        for (int b = 0; b < 256; b++) {
            if (CHARS[b] == c) {
                return b;
            }
        }
        return -1;
    }

    /** The i-th character of the base vocabulary (the first 256 token ids). */
    static char baseSymbol(int i) {
        return CHARS[ORDER[i]];
    }
}
