package io.samstream.config;

/**
 * {@code samstream.stream-defaults}: what a stream definition that leaves out {@code live},
 * {@code decoder} or {@code prompts} gets.
 */
public record StreamDefaults(StreamSpec.Live live, StreamSpec.Decoder decoder, PromptSpec prompts) {}
