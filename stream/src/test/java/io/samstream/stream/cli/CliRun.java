package io.samstream.stream.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;

/** The command line run in-process as a user runs it, its exit code and what it printed. */
public final class CliRun {
    private CliRun() {}

    /** Exit code, stdout, stderr and how long it took. */
    public record Result(int code, String out, String err, long millis) {
        public String all() {
            return "exit " + code + " after " + millis + " ms\nstdout:\n" + out + "\nstderr:\n" + err;
        }
    }

    public static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        long t0 = System.nanoTime();
        int code = SamstreamCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(code, out.toString(), err.toString(), (System.nanoTime() - t0) / 1_000_000);
    }

    /** A command on a thread of its own (one that runs until stopped), its output readable meanwhile. */
    public static final class Running implements AutoCloseable {
        private final StringWriter out = new StringWriter(); // a StringBuffer inside: safe to read while written
        private final StringWriter err = new StringWriter();
        private final Thread thread;
        private volatile Integer code;

        public Running(String... args) {
            thread = new Thread(() -> code = SamstreamCli.run(new PrintWriter(out, true), new PrintWriter(err, true),
                    args), "cli-" + args[0]);
            thread.setDaemon(true);
            thread.start();
        }

        public String out() {
            return out.toString();
        }

        public String err() {
            return err.toString();
        }

        /** Waits until stdout or stderr holds {@code fragment}; fails (with the output) when it ended or the time ran out. */
        public void awaitOutput(String fragment, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!out().contains(fragment) && !err().contains(fragment)) {
                if (!thread.isAlive() && !out().contains(fragment) && !err().contains(fragment)) {
                    throw new AssertionError("ended (exit " + code + ") without printing '" + fragment + "'\nstdout:\n"
                            + out() + "\nstderr:\n" + err());
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("no '" + fragment + "' within " + timeout + "\nstdout:\n" + out()
                            + "\nstderr:\n" + err());
                }
                Thread.sleep(50);
            }
        }

        /** Waits for the command to end by itself; its exit code. */
        public int await(Duration timeout) throws InterruptedException {
            thread.join(timeout.toMillis());
            if (thread.isAlive()) {
                throw new AssertionError("still running after " + timeout + "\nstdout:\n" + out() + "\nstderr:\n" + err());
            }
            return code;
        }

        /** Interrupts it (what an in-process Ctrl-C is) and waits for it to end. */
        @Override
        public void close() throws InterruptedException {
            thread.interrupt();
            thread.join(60_000);
        }
    }
}
