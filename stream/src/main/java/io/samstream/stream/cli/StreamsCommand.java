package io.samstream.stream.cli;

import picocli.CommandLine.Command;

/** {@code samstream streams list|put|delete}: the stream definitions on the streams topic. */
@Command(
        name = "streams",
        mixinStandardHelpOptions = true,
        description = {
            "The stream definitions on the streams topic (samstream.streams-topic, compacted, key = stream id):"
                    + " list them, put one (add or redefine: the engine that runs it restarts it), delete one"
                    + " (a tombstone: the engine stops it). Definitions are checked as the engine checks them."
        },
        subcommands = {StreamsListCommand.class, StreamsPutCommand.class, StreamsDeleteCommand.class})
final class StreamsCommand {
}
