package io.samstream.stream.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.connectors.video.TestPatternSource.PatternObject;
import io.samstream.testkit.CocoMasks;
import io.samstream.testkit.TestModels;
import io.samstream.testkit.connectors.PatternTruth;
import java.awt.image.BufferedImage;
import io.samstream.gpu.tensor.Npy;
import io.samstream.gpu.tensor.NpyArray;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code samstream segment} end to end, through the same contract external parity checks use: run
 * the command on a reference fixture, read back {@code masks.json} and the {@code .npy} files, and
 * compare them with what Meta's reference returned for the same checkpoint, image and prompts.
 */
class SegmentCommandTest {
    private static final Path FIXTURES = TestModels.tinySamDir();
    private static final Path MODEL = FIXTURES.resolve("model.pth");
    private static final Path CASE = FIXTURES.resolve("landscape-shrink");
    private static final Path DEMO_MODEL = TestModels.demoSam();

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
                boolean[] decoded = CocoMasks.decode(jm.get("mask").get("counts").asText(), 180, 320);
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
    void imageTooThinForTheModelIsOneLineNamingIt() throws IOException {
        Path line = tmp.resolve("line.png");
        ImageIO.write(new BufferedImage(100_000, 1, BufferedImage.TYPE_BYTE_GRAY), "png", line.toFile());
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", line.toString(), "--point", "10,0",
                "--device", "cpu", "--out", tmp.resolve("out").toString());
        assertEquals(1, r.code);
        assertOneLineError(r, line + ": cannot be segmented: a 100000x1 (WxH) image resized so its longest side is"
                + " 256 pixels would be 0 pixels high");
    }

    @Test
    void imagesOverThePixelLimitAreRefusedBeforeDecoding() {
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--point", "10,10", "--max-pixels", "1000", "--out", tmp.toString());
        assertEquals(1, r.code);
        assertOneLineError(r, "is 320x180 pixels (WxH, 0.1 Mpx), more than the limit of 1000 pixels");
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
        assertOneLineError(r, "p.json: prompt set 1: point 0 must be [x, y] or [x, y, label], got [10]");
    }

    /** A bad --out is found before the image is read and the model loads (here: a checkpoint that is none). */
    @Test
    void outIsCheckedBeforeTheModelLoads() throws IOException {
        Path bogus = tmp.resolve("model.pth");
        Files.writeString(bogus, "hello");
        Path file = tmp.resolve("taken");
        Files.writeString(file, "x");
        Result r = run("segment", "--checkpoint", bogus.toString(), "--image", CASE.resolve("image.png").toString(),
                "--point", "10,10", "--out", file.toString());
        assertEquals(1, r.code);
        assertOneLineError(r, "--out " + file + ": is a file, not a directory");
        r = run("segment", "--checkpoint", bogus.toString(), "--image", CASE.resolve("image.png").toString(),
                "--point", "10,10", "--out", file.resolve("sub").toString());
        assertEquals(1, r.code);
        assertOneLineError(r, "--out " + file.resolve("sub") + ": " + file + " is a file, not a directory");
    }

    @Test
    void tooManyPointFlagsAreAUsageError() {
        List<String> args = new ArrayList<>(List.of("segment", "--checkpoint", MODEL.toString(), "--image",
                CASE.resolve("image.png").toString(), "--out", tmp.toString()));
        for (int i = 0; i < 63; i++) {
            args.add("--point");
            args.add("10,10");
        }
        Result r = run(args.toArray(String[]::new));
        assertEquals(2, r.code);
        assertTrue(r.err.contains("63 --point prompts, at most 62 are allowed"), r.err);
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
    void autoFindsEveryShapeOfATestPatternFrame() throws IOException {
        int w = 320;
        int h = 240;
        TestPatternSource source = new TestPatternSource("s", w, h, 25, 1, 1, false);
        byte[] rgb = source.render(0);
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        for (int i = 0; i < w * h; i++) {
            int c = (rgb[3 * i] & 0xff) << 16 | (rgb[3 * i + 1] & 0xff) << 8 | (rgb[3 * i + 2] & 0xff);
            img.setRGB(i % w, i / w, c);
        }
        Path png = tmp.resolve("frame.png");
        ImageIO.write(img, "png", png.toFile());
        Path out = tmp.resolve("auto");
        Result r = run("segment", "--checkpoint", DEMO_MODEL.toString(), "--image", png.toString(), "--auto",
                "--points-per-side", "10", "--min-area", "100", "--device", "cpu", "--out", out.toString());
        assertEquals(0, r.code, r.err);
        assertTrue(r.out.contains("4 mask(s)"), r.out);
        // Progress on stderr: the grid's 100 points, and the last line says all were decoded.
        assertTrue(r.err.matches("(?s).*segment: automatic mask generation, grid points decoded: 100/100 \\(100 %\\), [0-9.]+ s\\R"),
                r.err);

        JsonNode json = new ObjectMapper().readTree(out.resolve("masks.json").toFile());
        assertEquals(10, json.get("settings").get("points_per_side").asInt());
        assertEquals(100, json.get("settings").get("min_area").asInt());
        JsonNode masks = json.get("masks");
        List<PatternObject> objects = source.objectsAt(0);
        assertEquals(objects.size(), masks.size(), masks.toString());
        boolean[] found = new boolean[objects.size()];
        for (JsonNode m : masks) {
            boolean[] mask = CocoMasks.decode(m.get("mask").get("counts").asText(), h, w);
            long area = 0;
            for (boolean b : mask) {
                area += b ? 1 : 0;
            }
            assertEquals(area, m.get("area").asLong());
            int[] box = CocoMasks.box(mask, h, w);
            for (int k = 0; k < 4; k++) {
                assertEquals(box[k], m.get("box").get(k).asInt(), "box " + m.get("box"));
            }
            assertTrue(m.get("predicted_iou").floatValue() > 0.88f);
            assertTrue(m.get("stability").floatValue() >= 0.95f);
            int best = -1;
            for (int o = 0; o < objects.size(); o++) {
                if (CocoMasks.iou(mask, PatternTruth.visible(rgb, w, h, objects.get(o))) >= 0.7) {
                    best = o;
                }
            }
            assertTrue(best >= 0 && !found[best], "each mask is a different shape: " + m.get("box"));
            found[best] = true;
        }
    }

    @Test
    void autoTakesNoPrompts() {
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--auto", "--point", "10,10", "--out", tmp.toString());
        assertEquals(2, r.code);
        assertTrue(r.err.contains("--auto finds objects without prompts"), r.err);
    }

    @Test
    void autoSettingsAreCheckedUnderTheirFlagNames() {
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--auto", "--pred-iou-thresh", "1.5", "--out", tmp.toString());
        assertEquals(2, r.code);
        assertTrue(r.err.contains("--pred-iou-thresh must be in [0, 1], got 1.5"), r.err);
        r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--auto", "--points-per-side", "0", "--out", tmp.toString());
        assertEquals(2, r.code);
        assertTrue(r.err.contains("--points-per-side must be in 1..1024, got 0"), r.err);
    }

    @Test
    void cudaWithoutABackendSaysSo() {
        Result r = run("segment", "--checkpoint", MODEL.toString(), "--image", CASE.resolve("image.png").toString(),
                "--point", "10,10", "--device", "cuda", "--out", tmp.toString());
        assertEquals(1, r.code);
        assertOneLineError(r, "cuda");
    }

    private static final Path SAM2 = TestModels.tinySam2Dir();

    /**
     * A SAM 2.1 checkpoint (the tiny random-weight fixture, told from its keys) on frame 0 of the fixture's clip
     * with the fixture's box for object 1: on a frame already at the model's size the image predictor's mask is
     * what Meta's video predictor saved for that conditioning frame (same features, no_mem_embed, box corners).
     */
    @Test
    void aSam2CheckpointSegmentsAnImageAsMetasPredictorDid() throws IOException {
        Path png = tmp.resolve("frame0.png");
        byte[] rgb = Npy.read(SAM2.resolve("frame0_rgb.npy")).raw();
        writePng(rgb, 128, 128, png);
        JsonNode box = new ObjectMapper().readTree(SAM2.resolve("meta.json").toFile()).get("box_frame0_obj1");
        Path out = tmp.resolve("sam2");
        Result r = run("segment", "--checkpoint", SAM2.resolve("checkpoint.pt").toString(), "--image", png.toString(),
                "--box", box.get(0).asInt() + "," + box.get(1).asInt() + "," + box.get(2).asInt() + ","
                        + box.get(3).asInt(), "--device", "cpu", "--threads", "2", "--out", out.toString());
        assertEquals(0, r.code, r.err);
        JsonNode json = new ObjectMapper().readTree(out.resolve("masks.json").toFile());
        assertTrue(json.get("model").asText().startsWith("SAM 2.1 tiny fixture"), json.toString());
        JsonNode masks = json.get("prompt_sets").get(0).get("masks");
        assertEquals(1, masks.size(), "a box alone: one mask");
        boolean[] got = CocoMasks.decode(masks.get(0).get("mask").get("counts").asText(), 128, 128);
        byte[] packed = Npy.read(SAM2.resolve("masks_packed.npy")).raw();
        boolean[] ref = new boolean[128 * 128];
        for (int i = 0; i < ref.length; i++) { // frame 0, object 1: the first plane, np.packbits order
            ref[i] = (packed[i >> 3] >> (7 - (i & 7)) & 1) != 0;
        }
        int area = 0;
        for (boolean b : ref) {
            area += b ? 1 : 0;
        }
        assertTrue(area > 50, "the reference mask is not empty: " + area);
        assertTrue(iou(ref, got, 0, ref.length) >= 0.99, "IoU " + iou(ref, got, 0, ref.length));
        assertEquals(area, masks.get(0).get("area").asInt(), 0.01 * area + 2);
    }

    @Test
    void aSam2CheckpointGivesThreeMasksAtTheImageSizeForOnePointAndRefusesWhatIsSamsOnly() throws IOException {
        Path png = tmp.resolve("wide.png");
        byte[] rgb = new byte[200 * 150 * 3];
        for (int y = 0; y < 150; y++) {
            for (int x = 0; x < 200; x++) {
                boolean inside = x >= 60 && x < 140 && y >= 40 && y < 110;
                rgb[3 * (y * 200 + x)] = (byte) (inside ? 220 : 30);
                rgb[3 * (y * 200 + x) + 1] = (byte) (inside ? 40 : 60 + y / 3);
                rgb[3 * (y * 200 + x) + 2] = (byte) (x / 2);
            }
        }
        writePng(rgb, 200, 150, png);
        Path out = tmp.resolve("sam2-point");
        String ckpt = SAM2.resolve("checkpoint.pt").toString();
        Result r = run("segment", "--checkpoint", ckpt, "--image", png.toString(), "--point", "100,75", "--multimask",
                "--threads", "2", "--out", out.toString());
        assertEquals(0, r.code, r.err);
        JsonNode masks = new ObjectMapper().readTree(out.resolve("masks.json").toFile()).get("prompt_sets").get(0)
                .get("masks");
        assertEquals(3, masks.size());
        for (JsonNode m : masks) {
            assertEquals(150, m.get("mask").get("size").get(0).asInt());
            assertEquals(200, m.get("mask").get("size").get(1).asInt());
            boolean[] decoded = CocoMasks.decode(m.get("mask").get("counts").asText(), 150, 200);
            int area = 0;
            for (boolean b : decoded) {
                area += b ? 1 : 0;
            }
            assertEquals(area, m.get("area").asInt());
        }
        Result auto = run("segment", "--checkpoint", ckpt, "--image", png.toString(), "--auto", "--out",
                tmp.resolve("auto").toString());
        assertEquals(2, auto.code, auto.err);
        assertTrue(auto.err.contains("checkpoint.pt is a SAM 2.1 checkpoint: --auto"), auto.err);
        Result cuda = run("segment", "--checkpoint", ckpt, "--image", png.toString(), "--point", "1,1", "--device",
                "cuda", "--out", tmp.resolve("cuda").toString());
        if (!io.samstream.gpu.cuda.CudaAvailability.probe().available()) {
            // without a GPU: the reason, in one line (on a GPU the image encoder runs there)
            assertEquals(1, cuda.code, cuda.err);
            assertOneLineError(cuda, "device cuda: ");
        }
    }

    private static void writePng(byte[] rgb, int w, int h, Path file) throws IOException {
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                int i = 3 * (y * w + x);
                img.setRGB(x, y, (rgb[i] & 0xFF) << 16 | (rgb[i + 1] & 0xFF) << 8 | (rgb[i + 2] & 0xFF));
            }
        }
        ImageIO.write(img, "png", file.toFile());
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
