package io.samstream.stream.cli;

import picocli.CommandLine.Command;

/** {@code samstream masks tail|export}: what the engines published on the mask topic. */
@Command(
        name = "masks",
        mixinStandardHelpOptions = true,
        description = "Read the mask records on the mask topic (samstream.kafka.masks-topic): follow them (tail) or"
                + " write one stream's masks to files (export).",
        subcommands = {MasksTailCommand.class, MasksExportCommand.class})
final class MasksCommand {
}
