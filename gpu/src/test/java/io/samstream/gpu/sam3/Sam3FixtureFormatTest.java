package io.samstream.gpu.sam3;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.sam3.text.Sam3Tokenizer;
import io.samstream.gpu.tensor.Npy;
import io.samstream.gpu.tensor.NpyArray;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;

/**
 * The fixture format of make_sam3_fixtures.py (channels-first maps, int64 tokens and query indexes, uint8 padding,
 * packed final masks in row-major bit order) written here from the CPU reference's own outputs and replayed by
 * {@link Sam3FixtureRun}: the replay passes on them and fails when one value moves, so the parity test reads Meta's
 * files the way the script writes them and is not vacuous.
 */
class Sam3FixtureFormatTest {
    @TempDir
    Path dir;

    @Test
    void ownOutputsReplayAndAPerturbationIsCaught() throws IOException {
        try (Sam3Model model = new Sam3Model(Sam3Weights.stateDict(Sam3Weights.TINY), 2)) {
            write(model, 0f);
            new Sam3FixtureRun(dir, model).checkPrompts(new Sam3FixtureRun(dir, model).checkImage(1e-6f), 1e-6f);
            new Sam3FixtureRun(dir, model).checkPreprocessing();
            write(model, 1e-3f);
            AssertionFailedError e = assertThrows(AssertionFailedError.class,
                    () -> new Sam3FixtureRun(dir, model).checkPrompts(model.encodeImage(
                            Npy.read(dir.resolve("model_input.npy")).toFloats()), 1e-6f));
            assertTrue(e.getMessage().contains("logits"), e.getMessage());
        }
    }

    private void write(Sam3Model model, float logitShift) throws IOException {
        int w = 160;
        int h = 120;
        RgbImage rgb = Sam3ModelTest.scene(w, h);
        Npy.write(dir.resolve("image.npy"), NpyArray.ofUint8(rgb.rgb(), h, w, 3));
        float[] input = Sam3Preprocessor.modelInput(rgb, 112);
        Npy.write(dir.resolve("model_input.npy"), NpyArray.ofFloat32(input, 3, 112, 112));
        VisionFeatures f = model.encodeImage(input);
        int g = f.grid();
        Npy.write(dir.resolve("trunk.npy"), NpyArray.ofFloat32(channelsFirst(f.trunk().values(), g * g), 48, g, g));
        for (int i = 0; i < 3; i++) {
            int side = g << (2 - i);
            Npy.write(dir.resolve("fpn" + i + ".npy"), NpyArray.ofFloat32(channelsFirst(f.fpn()[i], side * side), 32,
                    side, side));
        }
        Sam3Tokenizer tokenizer = Sam3Tokenizer.load(Sam3ModelTest.VOCAB);
        int[] tokens = tokenizer.tokenize("red circle", 32);
        TextFeatures text = model.encodeText(tokens);
        Detections det = model.detect(f, text, List.of());
        String p = "p0_";
        Npy.write(dir.resolve(p + "tokens.npy"), longs(tokens));
        Npy.write(dir.resolve(p + "text.npy"), NpyArray.ofFloat32(text.rows(), 32, 32));
        byte[] pad = new byte[32];
        for (int i = 0; i < 32; i++) {
            pad[i] = (byte) (text.padding()[i] ? 1 : 0);
        }
        Npy.write(dir.resolve(p + "text_mask.npy"), NpyArray.ofUint8(pad, 32));
        Npy.write(dir.resolve(p + "memory.npy"), NpyArray.ofFloat32(det.memory().values(), g * g, 32));
        Npy.write(dir.resolve(p + "queries.npy"), NpyArray.ofFloat32(det.queries(), 20, 32));
        float[] logits = det.logits().clone();
        logits[3] += logitShift;
        Npy.write(dir.resolve(p + "logits.npy"), NpyArray.ofFloat32(logits, 20));
        Npy.write(dir.resolve(p + "boxes.npy"), NpyArray.ofFloat32(det.boxes(), 20, 4));
        Npy.write(dir.resolve(p + "presence.npy"), NpyArray.ofFloat32(new float[] {det.presence()}, 1));
        int[] top = java.util.Arrays.copyOf(det.ranking(), 3);
        Npy.write(dir.resolve(p + "top.npy"), longs(top));
        float[] masks = model.masks(det, top);
        Npy.write(dir.resolve(p + "masks.npy"), NpyArray.ofFloat32(masks, 3, 32, 32));
        float[] scores = new float[3];
        float[] boxes = new float[12];
        byte[] packed = new byte[(3 * h * w + 7) / 8];
        for (int k = 0; k < 3; k++) {
            float[] one = java.util.Arrays.copyOfRange(masks, k * 1024, (k + 1) * 1024);
            Sam3Result.Instance inst = Sam3Image.instance(det, top[k], one, 32, w, h);
            scores[k] = inst.score();
            System.arraycopy(inst.box(), 0, boxes, 4 * k, 4);
            for (int i = 0; i < h * w; i++) {
                if (inst.mask()[i]) {
                    int bit = k * h * w + i;
                    packed[bit >> 3] |= (byte) (0x80 >> (bit & 7));
                }
            }
        }
        Npy.write(dir.resolve(p + "final_scores.npy"), NpyArray.ofFloat32(scores, 3));
        Npy.write(dir.resolve(p + "final_boxes.npy"), NpyArray.ofFloat32(boxes, 3, 4));
        Npy.write(dir.resolve(p + "final_masks.npy"), NpyArray.ofUint8(packed, packed.length));
        Files.writeString(dir.resolve("meta.json"), "{\"image_hw\": [" + h + ", " + w + "], \"prompts\": "
                + "[{\"text\": \"red circle\"}]}");
    }

    private static NpyArray longs(int[] v) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(8 * v.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int x : v) {
            b.putLong(x);
        }
        return new NpyArray(NpyArray.INT64, new int[] {v.length}, b.array());
    }

    private static float[] channelsFirst(float[] hwc, int n) {
        int c = hwc.length / n;
        float[] out = new float[hwc.length];
        for (int i = 0; i < n; i++) {
            for (int ch = 0; ch < c; ch++) {
                out[ch * n + i] = hwc[i * c + ch];
            }
        }
        return out;
    }
}
