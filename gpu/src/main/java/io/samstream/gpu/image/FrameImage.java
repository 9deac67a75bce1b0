package io.samstream.gpu.image;

/**
 * A video frame as the encoder's pre-processing takes it: 8-bit RGB on the host ({@link RgbImage}), YUV
 * planes a hardware decoder left in GPU memory ({@link DeviceYuvImage}), which only a GPU backend reads in
 * place, or a CPU decoder's YUV planes on the host ({@link HostYuvImage}), which a GPU backend uploads as they
 * are; everything else asks for {@link #toRgb}.
 */
public sealed interface FrameImage permits RgbImage, DeviceYuvImage, HostYuvImage {
    int width();

    int height();

    /** The frame as 8-bit RGB on the host (a GPU frame is downloaded). */
    RgbImage toRgb();
}
