package io.samstream.gpu.image;

/**
 * An 8-bit RGB image, rows top to bottom, pixels interleaved R,G,B (HWC, as numpy holds it).
 * This is what decoders hand to the model, whatever the source format was.
 */
public record RgbImage(int width, int height, byte[] rgb) implements FrameImage {
    public RgbImage {
        if (width <= 0 || height <= 0) {
            throw new IllegalArgumentException("image size must be positive, got " + width + "x" + height);
        }
        if (rgb.length != 3L * width * height) {
            throw new IllegalArgumentException(
                    "RGB buffer of " + rgb.length + " bytes does not hold a " + width + "x" + height + " image");
        }
    }

    @Override
    public RgbImage toRgb() {
        return this;
    }

    /** Channel {@code c} (0=R, 1=G, 2=B) of pixel (x, y), 0..255. */
    public int get(int x, int y, int c) {
        return rgb[(y * width + x) * 3 + c] & 0xFF;
    }
}
