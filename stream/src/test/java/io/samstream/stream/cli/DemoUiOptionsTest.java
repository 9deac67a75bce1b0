package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** {@code demo --ui}'s options are checked before anything starts. */
class DemoUiOptionsTest {
    private static String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SamstreamCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new String[] {Integer.toString(code), out.toString(), err.toString()};
    }

    @Test
    void portGoesWithUiAndMustBeAPort() {
        String[] r = run("demo", "--port", "9000");
        assertEquals("2", r[0], r[2]);
        assertTrue(r[2].contains("--port goes with --ui"), r[2]);
        r = run("demo", "--ui", "--port", "70000");
        assertEquals("2", r[0], r[2]);
        assertTrue(r[2].contains("--port must be 0 to 65535, got 70000"), r[2]);
        r = run("demo", "--help");
        assertTrue(r[1].contains("--ui") && r[1].contains("web console"), r[1]);
    }
}
