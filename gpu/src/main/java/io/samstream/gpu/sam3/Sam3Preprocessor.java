package io.samstream.gpu.sam3;

import io.samstream.gpu.image.PillowBilinearResize;
import io.samstream.gpu.image.RgbImage;

/**
 * SAM 3's image pre-processing ({@code Sam3Processor.transform}): the image is resized to the model's square input
 * without keeping its aspect ratio (antialiased bilinear on 8-bit values, as Pillow and torchvision's uint8 path
 * compute it), scaled to [0, 1] and normalized with mean 0.5 and std 0.5, to [-1, 1].
 */
public final class Sam3Preprocessor {
    private Sam3Preprocessor() {}

    /** The model input [3, size, size], channel-first. */
    public static float[] modelInput(RgbImage image, int size) {
        RgbImage resized = PillowBilinearResize.resize(image, size, size);
        byte[] rgb = resized.rgb();
        float[] out = new float[3 * size * size];
        for (int i = 0; i < size * size; i++) {
            for (int c = 0; c < 3; c++) {
                float v = (rgb[3 * i + c] & 0xFF) / 255f;
                out[c * size * size + i] = (v - 0.5f) / 0.5f;
            }
        }
        return out;
    }
}
