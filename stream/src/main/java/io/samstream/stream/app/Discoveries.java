package io.samstream.stream.app;

import io.samstream.config.EngineSettings;
import io.samstream.gpu.model.SamBackend;
import io.samstream.stream.track.ObjectTracker;
import java.util.Optional;

/** The engine's automatic discovery, built from {@code samstream.discovery}. */
final class Discoveries {
    private Discoveries() {}

    static Optional<ObjectTracker.Discovery> of(EngineSettings.Discovery settings, SamBackend backend) {
        if (!settings.enabled()) {
            return Optional.empty();
        }
        throw new IllegalStateException("samstream.discovery.enabled: this build has no automatic mask generator yet"
                + " (set samstream.discovery.enabled = off)");
    }
}
