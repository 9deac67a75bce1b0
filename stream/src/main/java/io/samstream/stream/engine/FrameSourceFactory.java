package io.samstream.stream.engine;

import io.samstream.config.StreamSpec;
import io.samstream.connectors.video.FrameSource;
import java.io.IOException;

/** Opens the source of a stream; called on the blocking dispatcher, again for each reconnect of a live one. */
@FunctionalInterface
public interface FrameSourceFactory {
    FrameSource open(StreamSpec spec) throws IOException;

    /**
     * The same sources with hardware-decoded frames left in GPU memory, for a backend that reads them there
     * ({@link io.samstream.gpu.model.SamBackend#readsDeviceFrames}); by default the same factory.
     */
    default FrameSourceFactory withGpuFrames() {
        return this;
    }
}
