package io.samstream.config;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The validated configuration of an engine instance, read from {@code reference.conf} plus overrides.
 *
 * @param checkpoint the SAM checkpoint to load; empty means the bundled example model
 * @param device     where the model runs
 * @param cpuThreads threads of the CPU backend (already resolved: never 0)
 * @param kafka      where masks are published and prompts read ({@code samstream.kafka})
 */
public record SamstreamConfig(Optional<Path> checkpoint, Device device, int cpuThreads, KafkaSettings kafka) {}
