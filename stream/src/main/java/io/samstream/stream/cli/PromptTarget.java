package io.samstream.stream.cli;

import picocli.CommandLine.Option;

/** What every {@code samstream prompts} change names: the stream, from which frame, and whether to check the stream. */
final class PromptTarget {
    @Option(names = "--stream", required = true, paramLabel = "ID", description = "The stream it changes.")
    String stream;

    @Option(names = "--frame", paramLabel = "F", description = "The first frame it applies to (default: the next"
            + " frame the engine decodes).")
    Long frame;

    @Option(names = "--no-check", description = "Send it even when the stream is not defined on the streams topic"
            + " (nor in the -c file's samstream.streams).")
    boolean noCheck;
}
