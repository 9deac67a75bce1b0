package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.mask.CocoRle;
import io.samstream.gpu.tensor.Npy;
import io.samstream.gpu.tensor.NpyArray;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code samstream segment} end to end, through the same contract external parity checks use: run
 * the command on a reference fixture, read back {@code masks.json} and the {@code .npy} files, and
 * compare them with what Meta's reference returned for the same checkpoint, image and prompts.
 */
class SegmentCommandTest {
    private static final Path FIXTURES = Path.of("../gpu/src/test/resources/fixtures/tiny256");
    private static final Path MODEL = FIXTURES.resolve("model.pth");
    private static final Path CASE = FIXTURES.resolve("landscape-shrink");

    @TempDir
    Path tmp;

    @Test
    void promptsFileWithNpyMatchesTheReference() throws IOException {
        Path out = tmp.resolve("out");
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--prompts", CASE.resolve("prompts.json").toString(), "--device", "cpu", "--npy", "--out", out.toString());
        assertEquals(0, r.code, r.err);

        Map<String, NpyArray> expected = Npy.readNpz(CASE.resolve("expected.npz"));
        NpyArray embedding = Npy.read(out.resolve("embedding.npy"));
        assertEquals(NpyArray.FLOAT32, embedding.dtype());
        assertArrayEquals(expected.get("embedding").shape(), embedding.shape());

        JsonNode json = new ObjectMapper().readTree(out.resolve("masks.json").toFile());
        assertEquals(320, json.get("width").asInt());
        assertEquals(180, json.get("height").asInt());
        JsonNode sets = json.get("prompt_sets");
        assertEquals(4, sets.size());
        for (int i = 0; i < sets.size(); i++) {
            Path dir = out.resolve("prompt-" + i);
            NpyArray masks = Npy.read(dir.resolve("masks.npy"));
            NpyArray iou = Npy.read(dir.resolve("iou.npy"));
            NpyArray lowres = Npy.read(dir.resolve("lowres.npy"));
            assertEquals(NpyArray.BOOL, masks.dtype());
            assertEquals(NpyArray.FLOAT32, iou.dtype());
            assertEquals(NpyArray.FLOAT32, lowres.dtype());
            assertArrayEquals(expected.get("masks_" + i).shape(), masks.shape(), "masks.npy shape");
            assertArrayEquals(expected.get("lowres_" + i).shape(), lowres.shape(), "lowres.npy shape");

            boolean[] ref = expected.get("masks_" + i).toBooleans();
            boolean[] got = masks.toBooleans();
            float[] refIou = expected.get("iou_" + i).toFloats();
            int n = masks.shape()[0];
            int plane = 320 * 180;
            JsonNode jsonMasks = sets.get(i).get("masks");
            assertEquals(n, jsonMasks.size());
            for (int m = 0; m < n; m++) {
                assertTrue(iou(ref, got, m * plane, plane) >= 0.99, "set " + i + " mask " + m);
                assertEquals(refIou[m], iou.toFloats()[m], 0.005);
                // masks.json carries the same mask as RLE, its predicted IoU, box and area.
                JsonNode jm = jsonMasks.get(m);
                boolean[] decoded = CocoRle.decode(jm.get("mask").get("counts").asText(), 180, 320);
                boolean[] fromNpy = java.util.Arrays.copyOfRange(got, m * plane, (m + 1) * plane);
                assertArrayEquals(fromNpy, decoded, "RLE of set " + i + " mask " + m);
                assertEquals(iou.toFloats()[m], jm.get("predicted_iou").floatValue(), 0.0);
                long area = 0;
                for (boolean b : decoded) {
                    area += b ? 1 : 0;
                }
                assertEquals(area, jm.get("area").asLong());
            }
        }
    }

    @Test
    void flagsMakeOnePromptSet() throws IOException {
        Path out = tmp.resolve("flags");
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--point", "100,80", "--point", "200,100,0", "--box", "20,20,300,170", "--multimask", "--out",
                out.toString());
        assertEquals(0, r.code, r.err);
        JsonNode set = new ObjectMapper().readTree(out.resolve("masks.json").toFile()).get("prompt_sets").get(0);
        assertEquals(3, set.get("masks").size());
        assertEquals(0, set.get("prompt").get("labels").get(1).asInt());
        assertTrue(Files.notExists(out.resolve("embedding.npy")), "no .npy without --npy");
    }

    @Test
    void missingImageIsOneLineNamingIt() {
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", "no/such.png", "--point", "1,1",
                "--out", tmp.toString());
        assertEquals(1, r.code);
        assertOneLineError(r, "no/such.png");
    }

    @Test
    void pointOutsideTheImageIsRejected() {
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--point", "500,10", "--out", tmp.toString());
        assertEquals(1, r.code);
        assertOneLineError(r, "outside the 320x180 image");
    }

    @Test
    void malformedPointIsAUsageError() {
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--point", "ten,20", "--out", tmp.toString());
        assertEquals(2, r.code);
        assertTrue(r.err.contains("point 'ten,20' must be X,Y[,LABEL]"), r.err);
    }

    @Test
    void badPromptsFileNamesFileAndSet() throws IOException {
        Path prompts = tmp.resolve("p.json");
        Files.writeString(prompts, "[{\"points\":[[10,10]],\"labels\":[1]}, {\"points\":[[10]],\"labels\":[1]}]");
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--prompts", prompts.toString(), "--out", tmp.toString());
        assertEquals(1, r.code);
        assertOneLineError(r, "p.json: prompt set 1: point 0 must be an array of 2 numbers");
    }

    @Test
    void notACheckpointIsNamed() throws IOException {
        Path bogus = tmp.resolve("model.pth");
        Files.writeString(bogus, "hello");
        Result r = run("segment", "--checkpoint", bogus.toString(), "--image", CASE.resolve("image.png").toString(),
                "--point", "10,10", "--out", tmp.toString());
        assertEquals(1, r.code);
        assertOneLineError(r, bogus.toString());
    }

    @Test
    void noPromptIsAUsageError() {
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--out", tmp.toString());
        assertEquals(2, r.code);
        assertTrue(r.err.contains("no prompt"), r.err);
    }

    @Test
    void cudaWithoutABackendSaysSo() {
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--point", "10,10", "--device", "cuda", "--out", tmp.toString());
        assertEquals(1, r.code);
        assertOneLineError(r, "cuda");
    }

    private static void assertOneLineError(Result r, String expected) {
        String[] lines = r.err.strip().split("\n");
        String last = lines[lines.length - 1];
        assertTrue(last.startsWith("samstream: error: "), r.err);
        assertTrue(last.contains(expected), r.err);
    }

    private static double iou(boolean[] a, boolean[] b, int offset, int length) {
        long inter = 0;
        long union = 0;
        for (int i = offset; i < offset + length; i++) {
            inter += a[i] && b[i] ? 1 : 0;
            union += a[i] || b[i] ? 1 : 0;
        }
        return union == 0 ? 1 : (double) inter / union;
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SamstreamCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(code, out.toString(), err.toString());
    }

    private record Result(int code, String out, String err) {}
}
