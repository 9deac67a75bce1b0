package io.samstream.gpu.image;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Bit-exact parity with the reference libraries: digests of outputs of Pillow 12.3 (through torchvision's
 * resize, i.e. SAM's {@code ResizeLongestSide.apply_image}) and PyTorch 2.11 (CPU and CUDA agreed bit for bit),
 * made by {@code tools/fixtures/make_imaging_fixtures.py} on the GPU machine. Inputs are recomputed here by
 * {@link ParityInputs}.
 */
class ReferenceParityTest {
    private static JsonNode fixtures;

    @BeforeAll
    static void load() throws IOException {
        try (InputStream in = ReferenceParityTest.class.getResourceAsStream("/fixtures/imaging_parity.json")) {
            fixtures = new ObjectMapper().readTree(in);
        }
    }

    @Test
    void pillowBilinearResizesAreBitExact() {
        int checked = 0;
        for (JsonNode c : fixtures.get("resize")) {
            RgbImage in = ParityInputs.image(c.get("pattern").asText(), c.get("width").asInt(), c.get("height").asInt(),
                    c.get("seed").asInt());
            RgbImage out = c.get("kind").asText().equals("longest_side")
                    ? new ResizeLongestSide(1024).apply(in)
                    : PillowBilinearResize.resize(in, c.get("out_width").asInt(), c.get("out_height").asInt());
            String what = c.get("pattern").asText() + " " + in.width() + "x" + in.height() + " -> "
                    + c.get("out_width").asInt() + "x" + c.get("out_height").asInt();
            assertEquals(c.get("out_width").asInt(), out.width(), what);
            assertEquals(c.get("out_height").asInt(), out.height(), what);
            assertEquals(c.get("sha256").asText(), sha256(out.rgb()), what);
            checked++;
        }
        assertEquals(66, checked);
    }

    @Test
    void preprocessIsBitExactWithTorch() {
        ResizeLongestSide resize = new ResizeLongestSide(1024);
        SamPreprocessor preprocessor = new SamPreprocessor(1024);
        for (JsonNode c : fixtures.get("preprocess")) {
            RgbImage resized = resize.apply(ParityInputs.image("noise", c.get("width").asInt(), c.get("height").asInt(),
                    c.get("seed").asInt()));
            assertEquals(c.get("resized_sha256").asText(), sha256(resized.rgb()));
            Tensor input = preprocessor.apply(resized);
            assertEquals(c.get("cpu_sha256").asText(), sha256(input.data()));
            assertEquals(c.get("cuda_sha256").asText(), sha256(input.data()));
        }
    }

    @Test
    void postprocessIsBitExactWithTorch() {
        MaskPostprocessor post = new MaskPostprocessor(1024);
        for (JsonNode c : fixtures.get("postprocess")) {
            int w = c.get("width").asInt();
            int h = c.get("height").asInt();
            Tensor low = new Tensor(ParityInputs.lowResLogits(3, 256, c.get("seed").asInt()), 3, 256, 256);
            assertEquals(c.get("low_res_sha256").asText(), sha256(low.data()), "inputs");
            ImageSize resized = new ImageSize(c.get("input_height").asInt(), c.get("input_width").asInt());
            assertEquals(resized, new ResizeLongestSide(1024).preprocessShape(h, w));
            ImageSize original = new ImageSize(h, w);

            Tensor logits = post.upscaleLogits(low, resized, original);
            assertEquals(c.get("cpu_logits_sha256").asText(), sha256(logits.data()), w + "x" + h + " logits");

            boolean[][] masks = post.masks(low, resized, original);
            byte[] bytes = new byte[3 * h * w];
            int pixels = 0;
            for (int m = 0; m < 3; m++) {
                for (int i = 0; i < h * w; i++) {
                    if (masks[m][i]) {
                        bytes[m * h * w + i] = 1;
                        pixels++;
                    }
                }
            }
            assertEquals(c.get("cpu_mask_pixels").asInt(), pixels, w + "x" + h + " mask pixels");
            assertEquals(c.get("cpu_masks_sha256").asText(), sha256(bytes), w + "x" + h + " masks");
        }
    }

    private static String sha256(float[] values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(values);
        return sha256(b.array());
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
