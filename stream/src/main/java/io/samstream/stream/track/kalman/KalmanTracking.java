package io.samstream.stream.track.kalman;

import io.samstream.config.EngineSettings;
import io.samstream.gpu.model.SamBackend;
import io.samstream.stream.track.Discovery;
import io.samstream.stream.track.Tracking;
import io.samstream.stream.track.TrackingMeters;

/** Kalman mode on one lane's SAM backend: an {@link ObjectTracker} per run of a stream, with the lane's discovery. */
public final class KalmanTracking implements Tracking {
    private final SamBackend backend;
    private final EngineSettings.Tracking settings;
    private final Discovery discovery;

    /** @param discovery null for none */
    public KalmanTracking(SamBackend backend, EngineSettings.Tracking settings, Discovery discovery) {
        this.backend = backend;
        this.settings = settings;
        this.discovery = discovery;
    }

    @Override
    public ObjectTracker open(String stream, TrackingMeters meters) {
        return new ObjectTracker(stream, backend, settings, discovery, meters);
    }
}
