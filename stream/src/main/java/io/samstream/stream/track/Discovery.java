package io.samstream.stream.track;

/**
 * Automatic discovery of new objects: what finds them, every how many frames (key frames, from the first), and how
 * much of a found mask live objects may cover for it still to be new.
 */
public record Discovery(ObjectDiscovery finder, int interval, double newObjectMaxOverlap) {}
