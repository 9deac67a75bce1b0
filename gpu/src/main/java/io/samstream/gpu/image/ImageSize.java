package io.samstream.gpu.image;

/**
 * A height and a width in pixels, in that order, as the reference code passes sizes around
 * ({@code (H, W)} tuples): original frame sizes, resized input sizes, mask sizes.
 */
public record ImageSize(int height, int width) {
    public ImageSize {
        if (height <= 0 || width <= 0) {
            throw new IllegalArgumentException("image size must be positive, got " + height + "x" + width + " (HxW)");
        }
    }

    public static ImageSize of(RgbImage image) {
        return new ImageSize(image.height(), image.width());
    }

    public long pixels() {
        return (long) height * width;
    }

    @Override
    public String toString() {
        return height + "x" + width;
    }
}
