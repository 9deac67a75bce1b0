package io.samstream.connectors.sink;

import java.util.List;

import io.samstream.connectors.video.VideoFrame;

/**
 * Draws masks over a frame: each object's area tinted with its {@link ObjectPalette} colour at
 * {@link #FILL_OPACITY}, and its outline (mask pixels with a 4-neighbour outside the mask or the
 * frame) in the solid colour. Objects are drawn in list order, later ones over earlier ones.
 */
public final class MaskOverlay {
    /** How much of the object's colour goes into a pixel inside its mask. */
    public static final double FILL_OPACITY = 0.45;
    private static final int FILL_WEIGHT = (int) Math.round(FILL_OPACITY * 256);

    private MaskOverlay() {
    }

    /**
     * A new RGB24 image: the frame with the masks drawn on it; the frame is not changed.
     *
     * @throws IllegalArgumentException if a mask is not of the frame's size
     */
    public static byte[] draw(VideoFrame frame, List<ObjectMask> masks) {
        int width = frame.width();
        int height = frame.height();
        int pixels = width * height;
        byte[] rgb = frame.rgb().clone();
        for (ObjectMask object : masks) {
            boolean[] mask = object.mask();
            if (mask.length != pixels) {
                throw new IllegalArgumentException(frame.streamId() + ": mask of object " + object.objectId() + " has "
                        + mask.length + " pixels, the " + width + "x" + height + " frame " + pixels);
            }
            int colour = ObjectPalette.rgbOf(object.objectId());
            int r = colour >>> 16 & 0xFF;
            int g = colour >>> 8 & 0xFF;
            int b = colour & 0xFF;
            for (int y = 0; y < height; y++) {
                int row = y * width;
                for (int x = 0; x < width; x++) {
                    int p = row + x;
                    if (!mask[p]) {
                        continue;
                    }
                    int at = 3 * p;
                    if (isEdge(mask, width, height, x, y)) {
                        rgb[at] = (byte) r;
                        rgb[at + 1] = (byte) g;
                        rgb[at + 2] = (byte) b;
                    } else {
                        rgb[at] = blend(rgb[at], r);
                        rgb[at + 1] = blend(rgb[at + 1], g);
                        rgb[at + 2] = blend(rgb[at + 2], b);
                    }
                }
            }
        }
        return rgb;
    }

    private static boolean isEdge(boolean[] mask, int width, int height, int x, int y) {
        int p = y * width + x;
        return x == 0 || y == 0 || x == width - 1 || y == height - 1
                || !mask[p - 1] || !mask[p + 1] || !mask[p - width] || !mask[p + width];
    }

    private static byte blend(byte under, int colour) {
        int base = under & 0xFF;
        return (byte) (base + (((colour - base) * FILL_WEIGHT) >> 8));
    }
}
