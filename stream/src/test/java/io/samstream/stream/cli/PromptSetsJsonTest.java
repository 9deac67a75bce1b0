package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.predict.PromptSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PromptSetsJsonTest {
    @TempDir
    Path dir;

    @Test
    void readsEveryFormOfPromptSet() throws IOException {
        List<PromptSet> sets = PromptSetsJson.read(write("""
                [{"points": [[10.5, 20], [30, 40]], "labels": [1, 0], "box": null, "multimask": true},
                 {"points": null, "labels": null, "box": [1, 2, 3, 4], "multimask": false},
                 {"points": [[5, 6]], "name": "extra fields are ignored"}]"""));
        assertEquals(3, sets.size());
        assertArrayEquals(new double[] {10.5, 20}, sets.get(0).points()[0]);
        assertArrayEquals(new int[] {1, 0}, sets.get(0).labels());
        assertTrue(sets.get(0).multimask());
        assertNull(sets.get(1).points());
        assertArrayEquals(new double[] {1, 2, 3, 4}, sets.get(1).box());
        assertArrayEquals(new int[] {1}, sets.get(2).labels(), "labels default to foreground");
        assertFalse(sets.get(2).multimask(), "multimask defaults to false");
    }

    @Test
    void errorsNameTheFileAndTheSet() throws IOException {
        assertError("{}", "expected a JSON array of prompt sets");
        assertError("[", "not valid JSON");
        assertError("[]", "holds no prompt sets");
        assertError("[{\"box\": [1, 2, 3]}]", "prompt set 0: box must be an array of 4 numbers");
        assertError("[{\"box\": [1, 2, 3, 4]}, {\"points\": [[1, 2]], \"labels\": [0.5]}]",
                "prompt set 1: label 0 must be 0 or 1");
        assertError("[{\"box\": [1, 2, 3, 4], \"multimask\": \"yes\"}]", "\"multimask\" must be true or false");
        assertError("[[1, 2]]", "prompt set 0: expected an object");
        Path missing = dir.resolve("missing.json");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PromptSetsJson.read(missing)).getMessage()
                .contains("missing.json: prompts file not found"));
    }

    @Test
    void pointsMayCarryTheirLabelLikeTheConfigurationAndTheTopic() throws IOException {
        List<PromptSet> sets = PromptSetsJson.read(write("[{\"points\": [[10, 20, 0], [30, 40, 1], [5, 6]]}]"));
        assertArrayEquals(new double[] {10, 20}, sets.get(0).points()[0]);
        assertArrayEquals(new int[] {0, 1, 1}, sets.get(0).labels(), "a point without one is foreground");
        assertError("[{\"points\": [[1, 2, 0]], \"labels\": [0]}]", "prompt set 0: labels are given in the points");
        assertError("[{\"points\": [[1, 2, 3]]}]", "prompt set 0: point 0: the label must be 0 or 1, got 3.0");
        assertError("[{\"points\": [[1]]}]", "prompt set 0: point 0 must be [x, y] or [x, y, label], got [1]");
    }

    @Test
    void limitsAreClearErrors() throws IOException {
        String point = "[1, 2, 1]";
        String full = "{\"points\": [" + String.join(",", java.util.Collections.nCopies(PromptSetsJson.MAX_POINTS, point)) + "]}";
        assertEquals(PromptSetsJson.MAX_POINTS, PromptSetsJson.read(write("[" + full + "]")).get(0).pointCount());
        assertError("[{\"box\": [1, 2, 3, 4]}, {\"points\": ["
                + String.join(",", java.util.Collections.nCopies(PromptSetsJson.MAX_POINTS + 1, point)) + "]}]",
                "prompt set 1: has 63 points, at most 62 are allowed");
        String box = "{\"box\": [1, 2, 3, 4]}";
        assertEquals(PromptSetsJson.MAX_SETS, PromptSetsJson.read(write("["
                + String.join(",", java.util.Collections.nCopies(PromptSetsJson.MAX_SETS, box)) + "]")).size());
        assertError("[" + String.join(",", java.util.Collections.nCopies(PromptSetsJson.MAX_SETS + 1, box)) + "]",
                "holds 257 prompt sets, at most 256 are allowed");
        assertError("[" + " ".repeat((int) PromptSetsJson.MAX_FILE_BYTES) + "]",
                "the prompts file has 4194306 bytes, at most 4194304 are read");
    }

    private void assertError(String json, String expected) throws IOException {
        Path f = write(json);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PromptSetsJson.read(f));
        assertTrue(e.getMessage().startsWith(f.toString()), e.getMessage());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    private Path write(String json) throws IOException {
        Path f = Files.createTempFile(dir, "prompts", ".json");
        Files.writeString(f, json);
        return f;
    }
}
