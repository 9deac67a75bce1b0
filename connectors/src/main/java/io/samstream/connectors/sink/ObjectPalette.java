package io.samstream.connectors.sink;

/**
 * One stable colour per object id, the same on every run and machine, from 20 distinct colours: a
 * numeric id {@code n} gets colour {@code n mod 20}, so the first 20 objects of a stream all differ;
 * any other id gets the colour its {@link String#hashCode()} (specified by Java) picks, so ids that
 * differ only in their last character ("car-1", "car-2") differ in colour too.
 */
public final class ObjectPalette {
    /** Saturated, mutually distinct, readable over video at partial opacity. 0xRRGGBB. */
    private static final int[] COLOURS = {
        0xE6194B, 0x3CB44B, 0xFFE119, 0x4363D8, 0xF58231, 0x911EB4, 0x46F0F0, 0xF032E6, 0xBCF60C, 0xFABEBE,
        0x008080, 0xE6BEFF, 0x9A6324, 0xFFFAC8, 0x800000, 0xAAFFC3, 0x808000, 0xFFD8B1, 0x000075, 0xFFFFFF,
    };

    private ObjectPalette() {
    }

    /** The object's colour, 0xRRGGBB. */
    public static int rgbOf(String objectId) {
        return COLOURS[Math.floorMod(numberOrHash(objectId), COLOURS.length)];
    }

    private static long numberOrHash(String objectId) {
        int length = objectId.length();
        if (length > 0 && length <= 18) {
            long number = 0;
            for (int i = 0; i < length; i++) {
                char c = objectId.charAt(i);
                if (c < '0' || c > '9') {
                    return objectId.hashCode();
                }
                number = number * 10 + (c - '0');
            }
            return number;
        }
        return objectId.hashCode();
    }

    public static int size() {
        return COLOURS.length;
    }
}
