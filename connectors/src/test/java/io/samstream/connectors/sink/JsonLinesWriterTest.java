package io.samstream.connectors.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

class JsonLinesWriterTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void oneRecordPerLineOnDiskAsSoonAsWritten() throws IOException {
        Path file = dir.resolve("run").resolve(JsonLinesWriter.FILE_NAME);
        try (JsonLinesWriter writer = JsonLinesWriter.open(file)) {
            writer.write("{\"stream\":\"cam-1\",\"frame\":0,\"objects\":[]}".getBytes(StandardCharsets.UTF_8));
            // Visible to a reader before close: a crash now keeps this record.
            assertEquals(List.of("{\"stream\":\"cam-1\",\"frame\":0,\"objects\":[]}"), Files.readAllLines(file));
            writer.write("{\"stream\":\"caméra-2\",\"frame\":1}");
            assertEquals(2, writer.recordsWritten());
        }
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        assertEquals(2, lines.size());
        JsonNode second = JSON.readTree(lines.get(1));
        assertEquals("caméra-2", second.get("stream").asText());
    }

    @Test
    void appendsAfterCuttingAPartialLastLine() throws IOException {
        Path file = dir.resolve(JsonLinesWriter.FILE_NAME);
        Files.writeString(file, "{\"frame\":0}\n{\"frame\":1}\n{\"fra"); // a kill mid-record
        try (JsonLinesWriter writer = JsonLinesWriter.open(file)) {
            assertEquals(2, writer.earlier().lines());
            assertEquals("{\"frame\":1}", new String(writer.earlier().lastLine(), StandardCharsets.UTF_8));
            assertEquals(5, writer.earlier().cutBytes());
            writer.write("{\"frame\":2}");
        }
        assertEquals(List.of("{\"frame\":0}", "{\"frame\":1}", "{\"frame\":2}"), Files.readAllLines(file));
    }

    @Test
    void aFileOfOnlyAPartialLineIsEmptied() throws IOException {
        Path file = dir.resolve(JsonLinesWriter.FILE_NAME);
        Files.writeString(file, "{\"frame\":0,\"obj");
        try (JsonLinesWriter writer = JsonLinesWriter.open(file)) {
            assertEquals(0, writer.earlier().lines());
            assertEquals(0, writer.earlier().lastLine().length);
            assertEquals(15, writer.earlier().cutBytes());
            writer.write("{\"frame\":0}");
        }
        assertEquals(List.of("{\"frame\":0}"), Files.readAllLines(file));
    }

    @Test
    void aCleanFileIsLeftAsItIs() throws IOException {
        Path file = dir.resolve(JsonLinesWriter.FILE_NAME);
        Files.writeString(file, "{\"frame\":0}\n");
        try (JsonLinesWriter writer = JsonLinesWriter.open(file)) {
            assertEquals(1, writer.earlier().lines());
            assertEquals(0, writer.earlier().cutBytes());
        }
        try (JsonLinesWriter writer = JsonLinesWriter.open(dir.resolve("new.jsonl"))) {
            assertEquals(0, writer.earlier().lines());
        }
        assertEquals(List.of("{\"frame\":0}"), Files.readAllLines(file));
    }

    @Test
    void refusesLineBreaksAndWritesAfterClose() throws IOException {
        JsonLinesWriter writer = JsonLinesWriter.open(dir.resolve("x.jsonl"));
        assertThrows(IllegalArgumentException.class, () -> writer.write("{\"a\":\n1}"));
        writer.close();
        writer.close();
        assertThrows(IOException.class, () -> writer.write("{}"));
    }

    @Test
    void linesFromManyThreadsNeverInterleave() throws Exception {
        Path file = dir.resolve("shared.jsonl");
        try (JsonLinesWriter writer = JsonLinesWriter.open(file)) {
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int stream = t;
                threads.add(new Thread(() -> {
                    for (int frame = 0; frame < 200; frame++) {
                        try {
                            writer.write("{\"stream\":\"s" + stream + "\",\"frame\":" + frame + ",\"pad\":\""
                                    + "x".repeat(300) + "\"}");
                        } catch (IOException e) {
                            throw new RuntimeException(e);
                        }
                    }
                }));
            }
            threads.forEach(Thread::start);
            for (Thread thread : threads) {
                thread.join();
            }
        }
        List<String> lines = Files.readAllLines(file);
        assertEquals(800, lines.size());
        Set<String> seen = new HashSet<>();
        for (String line : lines) {
            JsonNode node = JSON.readTree(line);
            seen.add(node.get("stream").asText() + "/" + node.get("frame").asInt());
        }
        assertEquals(800, seen.size());
    }
}
