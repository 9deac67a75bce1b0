package io.samstream.stream.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code samstream} command line. Errors are one clear line on stderr and a non-zero exit:
 * 2 for a malformed command line, 1 for anything that went wrong while running.
 */
@Command(
        name = "samstream",
        mixinStandardHelpOptions = true,
        versionProvider = SamstreamCli.Version.class,
        description = "Streaming video segmentation with the Segment Anything Model.",
        subcommands = {DemoCommand.class, RunCommand.class, SegmentCommand.class, PruneCommand.class,
                BrokerCommand.class, StreamsCommand.class, PromptsCommand.class, MasksCommand.class,
                CommandLine.HelpCommand.class})
public final class SamstreamCli {

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs a command line on stdout/stderr and returns its exit code. */
    public static int run(String... args) {
        return run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
    }

    /** Runs a command line with the given output streams (tests capture them) and returns its exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new SamstreamCli());
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
            cmd.getErr().println("samstream: error: " + oneLine(e));
            return 1;
        });
        cli.setParameterExceptionHandler((e, args1) -> {
            CommandLine cmd = e.getCommandLine();
            cmd.getErr().println("samstream: " + unknownCommand(e).orElse(e.getMessage()));
            cmd.getErr().println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help' for more information.");
            return 2;
        });
        return cli.execute(args);
    }

    /** "unknown command 'x' (one of: ...)" when a command of subcommands got an argument that names none. */
    private static java.util.Optional<String> unknownCommand(CommandLine.ParameterException e) {
        CommandLine cmd = e.getCommandLine();
        if (e instanceof CommandLine.UnmatchedArgumentException u && !cmd.getSubcommands().isEmpty()
                && !u.getUnmatched().isEmpty() && !u.getUnmatched().get(0).startsWith("-")) {
            return java.util.Optional.of("unknown command '" + u.getUnmatched().get(0) + "' for '"
                    + cmd.getCommandSpec().qualifiedName() + "' (one of: "
                    + String.join(", ", cmd.getSubcommands().keySet()) + ")");
        }
        return java.util.Optional.empty();
    }

    /** The message a user needs: ours are complete sentences; fall back to the exception type. */
    static String oneLine(Throwable e) {
        Throwable t = e;
        while (t.getMessage() == null && t.getCause() != null) {
            t = t.getCause();
        }
        String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        return message.replace('\n', ' ');
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = SamstreamCli.class.getPackage().getImplementationVersion();
            return new String[] {"samstream " + (v == null ? "dev" : v)};
        }
    }
}
