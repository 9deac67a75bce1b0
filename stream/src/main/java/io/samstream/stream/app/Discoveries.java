package io.samstream.stream.app;

import io.samstream.config.EngineSettings;
import io.samstream.gpu.model.SamBackend;
import io.samstream.stream.track.Discovery;
import io.samstream.stream.track.GeneratorDiscovery;
import java.util.Optional;

/** The engine's automatic discovery, built from {@code samstream.discovery}; empty when it is off. */
final class Discoveries {
    private Discoveries() {}

    static Optional<Discovery> of(EngineSettings.Discovery settings, SamBackend backend) {
        return of(settings, backend, io.samstream.config.Limits.DEFAULTS);
    }

    /** With {@code limits}' objects per stream as the most a stream's discovery fills up to. */
    static Optional<Discovery> of(EngineSettings.Discovery settings, SamBackend backend,
            io.samstream.config.Limits limits) {
        if (!settings.enabled()) {
            return Optional.empty();
        }
        return Optional.of(new Discovery(new GeneratorDiscovery(backend, settings), settings.interval(),
                settings.newObjectMaxOverlap(), limits.maxObjectsPerStream()));
    }
}
