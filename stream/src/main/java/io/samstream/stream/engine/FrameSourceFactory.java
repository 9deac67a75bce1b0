package io.samstream.stream.engine;

import io.samstream.config.StreamSpec;
import io.samstream.connectors.video.FrameSource;
import java.io.IOException;

/** Opens the source of a stream; called on the blocking dispatcher, again for each reconnect of a live one. */
@FunctionalInterface
public interface FrameSourceFactory {
    FrameSource open(StreamSpec spec) throws IOException;

    /**
     * The same sources with frames for a backend that reads YUV ({@link
     * io.samstream.gpu.model.SamBackend#readsDeviceFrames}): hardware-decoded frames left in GPU memory, a CPU
     * decoder's 8-bit 4:2:0 frames as their planes; by default the same factory.
     */
    default FrameSourceFactory withGpuFrames() {
        return this;
    }

    /**
     * The same sources with hardware-decoded frames left in the memory of GPU {@code gpu} (the one whose backend
     * reads them): NVDEC decodes there, on that GPU's primary context. By default {@link #withGpuFrames()} for
     * GPU 0 and host frames (this factory) for the others, which is always correct, only slower.
     */
    default FrameSourceFactory withGpuFrames(int gpu) {
        return gpu == 0 ? withGpuFrames() : this;
    }
}
