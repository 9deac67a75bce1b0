package io.samstream.gpu.image;

/**
 * The reference pre-processing resize (segment-anything's {@code utils/transforms.ResizeLongestSide}):
 * scale an image so its longest side is the model input size, keeping the aspect ratio, and map prompt
 * coordinates from the original frame into the resized one.
 *
 * <p>{@link #apply(RgbImage)} is {@code apply_image}: torchvision's {@code resize} of a PIL image, which is
 * PIL's bilinear resize ({@link PillowBilinearResize}). The coordinate methods are the numpy variants
 * ({@code apply_coords}, {@code apply_boxes}), which compute in float64.
 */
public final class ResizeLongestSide {
    private final int targetLength;

    public ResizeLongestSide(int targetLength) {
        if (targetLength <= 0) {
            throw new IllegalArgumentException("target length must be positive, got " + targetLength);
        }
        this.targetLength = targetLength;
    }

    public int targetLength() {
        return targetLength;
    }

    /**
     * {@code get_preprocess_shape}: {@code scale = longSide / max(h, w)}, each side {@code int(side * scale + 0.5)}.
     * Python's float is a double and {@code int()} truncates, as Java's cast does for these positive values.
     */
    public static ImageSize preprocessShape(int oldHeight, int oldWidth, int longSideLength) {
        if (oldHeight <= 0 || oldWidth <= 0 || longSideLength <= 0) {
            throw new IllegalArgumentException("sizes must be positive, got " + oldHeight + "x" + oldWidth
                    + " (HxW) to a long side of " + longSideLength);
        }
        double scale = longSideLength * 1.0 / Math.max(oldHeight, oldWidth);
        double newHeight = oldHeight * scale;
        double newWidth = oldWidth * scale;
        int height = (int) (newHeight + 0.5);
        int width = (int) (newWidth + 0.5);
        if (height == 0 || width == 0) {
            // The reference would hand PIL a 0-pixel side; say why instead of a bare size error.
            throw new IllegalArgumentException("a " + oldWidth + "x" + oldHeight + " (WxH) image resized so its"
                    + " longest side is " + longSideLength + " pixels would be " + (height == 0 ? "0 pixels high"
                    : "0 pixels wide") + ": its aspect ratio is beyond the " + 2L * longSideLength
                    + ":1 the model input allows");
        }
        return new ImageSize(height, width);
    }

    /** The size an {@code oldHeight} x {@code oldWidth} frame has after {@link #apply(RgbImage)}. */
    public ImageSize preprocessShape(int oldHeight, int oldWidth) {
        return preprocessShape(oldHeight, oldWidth, targetLength);
    }

    public ImageSize preprocessShape(ImageSize original) {
        return preprocessShape(original.height(), original.width(), targetLength);
    }

    /** {@code apply_image}: the image resized so its longest side is the target length (PIL bilinear). */
    public RgbImage apply(RgbImage image) {
        ImageSize size = preprocessShape(image.height(), image.width());
        return PillowBilinearResize.resize(image, size.width(), size.height());
    }

    /**
     * {@code apply_coords}: points {@code x0, y0, x1, y1, ...} in the original frame to the resized one.
     * x scales by {@code newW / oldW}, y by {@code newH / oldH}, each ratio a double division as in Python.
     */
    public double[] applyCoords(double[] xy, ImageSize original) {
        if (xy.length % 2 != 0) {
            throw new IllegalArgumentException("coordinates come in x,y pairs, got " + xy.length + " values");
        }
        ImageSize resized = preprocessShape(original);
        double sx = (double) resized.width() / original.width();
        double sy = (double) resized.height() / original.height();
        double[] out = new double[xy.length];
        for (int i = 0; i < xy.length; i += 2) {
            out[i] = xy[i] * sx;
            out[i + 1] = xy[i + 1] * sy;
        }
        return out;
    }

    /** {@code apply_boxes}: boxes {@code x0, y0, x1, y1, ...}; both corners scale as points. */
    public double[] applyBoxes(double[] boxes, ImageSize original) {
        if (boxes.length % 4 != 0) {
            throw new IllegalArgumentException("boxes come as x0,y0,x1,y1 quadruples, got " + boxes.length + " values");
        }
        return applyCoords(boxes, original);
    }
}
