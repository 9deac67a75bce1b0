/**
 * SAM 3's concept tracking in the engine: a stream's concepts ({@code prompts.concepts}, the concept ops of the
 * prompts topic and the HTTP API) found on frames by SAM 3's detector and followed by its tracker
 * ({@link io.samstream.gpu.sam3.video.Sam3VideoTracker}, the CPU fp32 reference), each published object naming the
 * concept that found it. {@link io.samstream.stream.track.concept.ConceptTracking} is the lane's mode, {@link
 * io.samstream.stream.track.concept.ConceptStreamTracker} one run of a stream, {@link
 * io.samstream.stream.track.concept.ConceptInputs} the concepts as the model takes them, {@link
 * io.samstream.stream.track.concept.ConceptFrames} a step as the records need it.
 */
package io.samstream.stream.track.concept;
