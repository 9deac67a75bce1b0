package io.samstream.gpu.cuda.sam3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ModelPrecision;
import io.samstream.gpu.sam3.Prompt;
import io.samstream.gpu.sam3.Sam3Config;
import io.samstream.gpu.sam3.Sam3ConfigInference;
import io.samstream.gpu.sam3.Sam3Shapes;
import io.samstream.gpu.tensor.Tensor;
import org.junit.jupiter.api.Test;

/**
 * What the CUDA SAM 3 backend decides before touching a GPU: the pool it asks for at the release's shapes, the shapes
 * its neck and fusion encoder refuse, and the prompt rows it uploads. The kernels' results are
 * CudaSam3FusionEncoderGpuTest's, CudaSam3NeckGpuTest's and CudaSam3VitGpuTest's.
 */
class CudaSam3Test {
    /** The release: ViT 1024 x 32 on 72 x 72 tokens, detector 256; of the text encoder only its context (32) counts. */
    static final Sam3Config RELEASE = new Sam3Config(Sam3ConfigInference.RELEASE_VIT,
            new Sam3Config.Text(49408, 32, 1024, 24, 16, 4096, 512), Sam3ConfigInference.RELEASE_DETECTOR);

    @Test
    void theFusionEncodersPoolHoldsItsWeightsAndActivationsAtTheReleaseShapes() {
        Sam3Config.Detector c = RELEASE.detector();
        int tokens = CudaSam3.tokens(RELEASE), prompt = CudaSam3.maxPromptTokens(RELEASE);
        assertEquals(72 * 72, tokens);
        assertEquals(32 + CudaSam3.MAX_EXEMPLAR_BOXES + 1, prompt);
        // the weights counted from the checkpoint's shapes, independently of the formula: bf16, 2 bytes a value
        long values = Sam3Shapes.fusionShapes(c).values().stream().mapToLong(Tensor::numel).sum();
        assertEquals(6 * (2 * (4 * 256 * 256 + 4 * 256) + 2 * 256 * 2048 + 2048 + 256 + 3 * 2 * 256), values);
        long d = c.dModel(), ffn = c.encoderFfn();
        // image, position, x, normalized x, v, attention output; q+k; the prompt and its k+v; the hidden rows
        long activations = (6 * tokens * d + tokens * 2 * d + prompt * d + prompt * 2 * d + tokens * ffn) * 2;
        long exact = values * 2 + activations;
        long bytes = CudaSam3FusionEncoder.poolBytes(c, tokens, prompt);
        int allocations = 6 * 22 + 10;   // per layer 3 norms x 2, 4 in_proj blocks x 2, 2 out_proj x 2, 2 linears x 2
        assertTrue(bytes >= exact, bytes + " < " + exact);
        assertTrue(bytes <= exact + allocations * 256L, bytes + " more than " + exact + " + alignment");
        assertTrue(bytes > 60_000_000 && bytes < 70_000_000, "19 MB of weights, 43 MB of activations: " + bytes);
    }

    @Test
    void thePoolIsTheTrunksTheNecksTheFusionEncodersAndTheSpare() {
        long fusion = CudaSam3FusionEncoder.poolBytes(RELEASE.detector(), CudaSam3.tokens(RELEASE),
                CudaSam3.maxPromptTokens(RELEASE));
        long neck = CudaSam3Neck.weightBytes(RELEASE), workspace = CudaSam3Neck.workspaceBytes(RELEASE);
        long head = CudaSam3MaskHead.poolBytes(RELEASE, CudaSam3.maxPromptTokens(RELEASE), 200)
                + CudaSam3Decoder.poolBytes(RELEASE.detector(), 72, CudaSam3.maxPromptTokens(RELEASE));
        long trunkMap = 72L * 72 * 1024 * 2;
        long image = CudaSam3.poolBytes(RELEASE, false, ModelPrecision.BF16);
        long video = CudaSam3.poolBytes(RELEASE, true, ModelPrecision.BF16);
        long trunkAndFusion = CudaSam3Vit.poolBytes(RELEASE.vision(), ModelPrecision.BF16) + fusion
                + CudaSam3.SPARE_BYTES;
        // the feature slots: per image the trunk map and the three levels (4x, 2x, 1x at width 256), and memories
        long tokens = 72L * 72, levels = (16 + 4 + 1) * tokens * 256 * 2, memory = tokens * 256 * 2;
        long slots = CudaSam3.FRAMES * (trunkMap + levels) + CudaSam3.MEMORIES * memory;
        assertEquals(slots, CudaSam3.slotBytes(RELEASE, false));
        assertEquals(slots + CudaSam3.FRAMES * levels, CudaSam3.slotBytes(RELEASE, true), "the tracker neck's levels");
        long preprocess = Sam3GpuPreprocessor.poolBytes(1008);
        assertEquals(trunkAndFusion + neck + workspace + trunkMap + head + slots + preprocess, image);
        assertEquals(image + neck + CudaSam3.FRAMES * levels, video,
                "the video checkpoint's second neck: its weights and level slots, the workspace is shared");
        // the trunk's 0.45 G weights (0.9 GB in bf16) dominate, then the necks' 3x3 rows at 288² (382 MB) and the
        // feature slots (4 images, 266 MB; the tracker neck's levels another 223 MB)
        assertTrue(video > 1_500_000_000L && video < 2_600_000_000L, "pool " + video);
    }

    @Test
    void anFp8TrunkTakesOneByteAValueForItsBlockLinearsPlusScalesAndItsE4m3Rows() {
        Sam3Config.Vision v = RELEASE.vision();
        long e = 1024, mlp = 4736, tokens = 72L * 72, depth = 32;
        // per block, bf16 against e4m3 + an fp32 scale per output channel: qkv [3e, e], proj [e, e], fc1 [mlp, e],
        // fc2 [e, mlp]
        long saved = depth * ((3 * e * e + e * e + 2 * mlp * e) - 4 * (3 * e + e + mlp + e));
        // the e4m3 rows (the widest Linear input: the MLP's), their row scales and fc2's block scales (4736 = 37 x 128)
        long rows = tokens * mlp + tokens * 4 + tokens * 37 * 4;
        long bf16 = CudaSam3Vit.poolBytes(v, ModelPrecision.BF16), fp8 = CudaSam3Vit.poolBytes(v, ModelPrecision.FP8);
        long allocations = depth * 8 + 3;   // each 256-byte aligned
        assertTrue(Math.abs((bf16 - fp8) - (saved - rows)) <= allocations * 256L,
                "bf16 " + bf16 + ", fp8 " + fp8 + ": " + (bf16 - fp8) + " saved, expected " + (saved - rows));
        assertEquals(CudaSam3.poolBytes(RELEASE, true, ModelPrecision.BF16) - bf16 + fp8,
                CudaSam3.poolBytes(RELEASE, true, ModelPrecision.FP8), "only the trunk's share changes");
    }

    @Test
    void fp8TrunkWidthsTheKernelsCannotRunAreRefusedBeforeAnyGpuWork() {
        Sam3Config.Vision r = RELEASE.vision();
        assertDoesNotThrow(() -> CudaSam3Vit.checkPrecision(r, ModelPrecision.FP8));
        Sam3Config.Vision odd = new Sam3Config.Vision(r.imageSize(), r.patchSize(), 1032, r.depth(), 12,
                r.mlpHidden(), r.windowSize(), r.globalBlocks(), r.pretrainGrid(), r.levels());
        assertDoesNotThrow(() -> CudaSam3Vit.checkPrecision(odd, ModelPrecision.BF16));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CudaSam3Vit.checkPrecision(odd, ModelPrecision.FP8));
        assertTrue(e.getMessage().contains("width 1032") && e.getMessage().contains("precision = fp8"),
                e.getMessage());
        Sam3Config.Vision wide = new Sam3Config.Vision(r.imageSize(), r.patchSize(), 1536, r.depth(), 16,
                r.mlpHidden(), r.windowSize(), r.globalBlocks(), r.pretrainGrid(), r.levels());
        assertThrows(IllegalArgumentException.class, () -> CudaSam3Vit.checkPrecision(wide, ModelPrecision.FP8));
        // fc2's e4m3 rows of k are whole 16-byte units: the tiny model's MLP of 222 is padded to 224 either way,
        // one of 232 to 232 in bf16 and 240 in fp8
        Sam3Config.Vision mlp232 = new Sam3Config.Vision(r.imageSize(), r.patchSize(), r.embedDim(), r.depth(),
                r.heads(), 232, r.windowSize(), r.globalBlocks(), r.pretrainGrid(), r.levels());
        assertEquals(232, CudaSam3Vit.mlpColumns(mlp232, ModelPrecision.BF16));
        assertEquals(240, CudaSam3Vit.mlpColumns(mlp232, ModelPrecision.FP8));
        assertEquals(4736, CudaSam3Vit.mlpColumns(r, ModelPrecision.FP8));
    }

    @Test
    void theNecksWeightsAndWorkspaceAtTheReleaseShapes() {
        // the weights counted from the checkpoint's shapes, independently of the formula: bf16, 2 bytes a value; the
        // 0.5x level (convs.3) is in the checkpoint but dropped (scalp=1), so not uploaded
        long values = Sam3Shapes.shapes(RELEASE).entrySet().stream()
                .filter(e -> e.getKey().startsWith("detector.backbone.vision_backbone.convs.")
                        && !e.getKey().startsWith("detector.backbone.vision_backbone.convs.3."))
                .mapToLong(e -> java.util.Arrays.stream(e.getValue()).asLongStream().reduce(1, (a, b) -> a * b)).sum();
        assertEquals(4L * 1024 * 512 + 512 + 4L * 512 * 256 + 256 + 4L * 1024 * 512 + 512
                + 256L * (256 + 512 + 1024) + 3 * 256 + 3 * (9L * 256 * 256 + 256), values);
        // the transposed convolutions' biases go up once per tap (x4)
        long uploaded = (values + 3 * (512 + 256 + 512)) * 2;
        long bytes = CudaSam3Neck.weightBytes(RELEASE);
        assertTrue(bytes >= uploaded && bytes <= uploaded + 18 * 256L, bytes + " for " + uploaded + " bytes");
        // taps (2 x 144² x 4 x 256 values), the 1x1 output, the 3x3 rows (9x), the three levels (288², 144², 72²) at 256
        long g = 72, taps = 4 * g * g * 4 * 256, level0 = 16 * g * g * 256;
        long exact = (2 * taps + level0 + 9 * level0 + level0 + level0 / 4 + level0 / 16) * 2;
        long ws = CudaSam3Neck.workspaceBytes(RELEASE);
        assertTrue(ws >= exact && ws <= exact + 7 * 256L, ws + " for " + exact);
    }

    @Test
    void theMaskHeadsPoolHoldsItsWeightsAndActivationsAtTheReleaseShapes() {
        // the weights counted from the checkpoint's shapes, bf16 but the GroupNorms; not uploaded: the query MLP (on
        // the CPU), the semantic head and the third convolution (two upsampling steps from three levels use two)
        long values = Sam3Shapes.shapes(RELEASE).entrySet().stream()
                .filter(e -> e.getKey().startsWith("detector.segmentation_head.")
                        && !e.getKey().contains("mask_predictor") && !e.getKey().contains("semantic_seg")
                        && !e.getKey().contains("conv_layers.2") && !e.getKey().contains("norms.2"))
                .mapToLong(e -> java.util.Arrays.stream(e.getValue()).asLongStream().reduce(1, (a, b) -> a * b)).sum();
        long d = 256, t = 72 * 72, n = 200, m = CudaSam3.maxPromptTokens(RELEASE);
        assertEquals(2 * d + 4 * d * d + 4 * d + 2 * (9 * d * d + d + 2 * d) + d * d + d, values);
        long groupNorms = 2 * 2 * d;
        // memory, its norm, q, attention, x; the prompt and its k + v; the 2x level; the 4x level, convolution, pixels;
        // the embeddings and the logits; the group norm's partials (8 groups x 64 x 2 doubles)
        long activations = (5 * t * d + m * d + 2 * m * d + 4 * t * d + 3 * 16 * t * d + n * d + 16 * t * n) * 2
                + 8 * 64 * 16;
        long exact = (values - groupNorms) * 2 + groupNorms * 4 + activations;
        long bytes = CudaSam3MaskHead.poolBytes(RELEASE, (int) m, (int) n);
        assertTrue(bytes >= exact && bytes <= exact + 28 * 256L, bytes + " for " + exact);
        assertEquals(72L * 4 * 72 * 4 * 9 * 256, CudaSam3MaskHead.rowsValues(RELEASE), "the necks' rows fit");
    }

    @Test
    void maskHeadShapesTheKernelsCannotRunAreRefusedNamingWhy() {
        assertDoesNotThrow(() -> CudaSam3MaskHead.checkSupported(RELEASE, 97, 200));
        Sam3Config.Detector d = RELEASE.detector();
        Sam3Config odd = new Sam3Config(RELEASE.vision(), RELEASE.text(), new Sam3Config.Detector(260, 4,
                d.encoderLayers(), d.encoderFfn(), d.decoderLayers(), d.decoderFfn(), d.queries(), d.geometryLayers(),
                d.geometryFfn(), d.roiSize(), d.pixelDecoderConvs(), d.scoringHidden()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CudaSam3MaskHead.checkSupported(odd, 97, 200));
        assertTrue(e.getMessage().contains("width 260"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CudaSam3MaskHead.checkSupported(RELEASE, 97, 0));
        assertTrue(e.getMessage().contains("0 queries"), e.getMessage());
    }

    @Test
    void neckShapesTheKernelsCannotRunAreRefusedNamingWhy() {
        assertDoesNotThrow(() -> CudaSam3Neck.checkSupported(RELEASE));
        Sam3Config.Vision r = RELEASE.vision();
        Sam3Config narrow = new Sam3Config(new Sam3Config.Vision(r.imageSize(), r.patchSize(), 1020, r.depth(),
                r.heads(), r.mlpHidden(), r.windowSize(), r.globalBlocks(), r.pretrainGrid(), r.levels()),
                RELEASE.text(), RELEASE.detector());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CudaSam3Neck.checkSupported(narrow));
        assertTrue(e.getMessage().contains("ViT width 1020"), e.getMessage());
        Sam3Config.Detector d = RELEASE.detector();
        Sam3Config odd = new Sam3Config(r, RELEASE.text(), new Sam3Config.Detector(252, 6, d.encoderLayers(),
                d.encoderFfn(), d.decoderLayers(), d.decoderFfn(), d.queries(), d.geometryLayers(), d.geometryFfn(),
                d.roiSize(), d.pixelDecoderConvs(), d.scoringHidden()));
        e = assertThrows(IllegalArgumentException.class, () -> CudaSam3Neck.checkSupported(odd));
        assertTrue(e.getMessage().contains("detector width 252"), e.getMessage());
    }

    @Test
    void shapesTheKernelsCannotRunAreRefusedNamingWhy() {
        assertDoesNotThrow(() -> CudaSam3FusionEncoder.checkSupported(RELEASE.detector(), 5184, 97));
        Sam3Config.Detector r = RELEASE.detector();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CudaSam3FusionEncoder
                .checkSupported(new Sam3Config.Detector(252, 6, 6, 2048, 6, 2048, 200, 3, 2048, 7, 3, 2048), 5184, 97));
        assertTrue(e.getMessage().contains("width 252") && e.getMessage().contains("head width 252/6"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CudaSam3FusionEncoder.checkSupported(
                new Sam3Config.Detector(256, 8, 6, 2044, 6, 2048, 200, 3, 2048, 7, 3, 2048), 5184, 97));
        assertTrue(e.getMessage().contains("feed-forward 2044"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CudaSam3FusionEncoder.checkSupported(
                new Sam3Config.Detector(256, 64, 6, 2048, 6, 2048, 200, 3, 2048, 7, 3, 2048), 5184, 97));
        assertTrue(e.getMessage().contains("head width 256/64"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CudaSam3FusionEncoder.checkSupported(r, 0, 97));
        assertTrue(e.getMessage().contains("0 image tokens"), e.getMessage());
    }

    @Test
    void onlyThePromptsValidRowsAreUploadedInOrder() {
        float[] rows = {1, 1, 2, 2, 3, 3, 4, 4};
        Prompt p = new Prompt(rows, new boolean[] {false, true, true, false});
        assertArrayEquals(new float[] {1, 1, 4, 4}, CudaSam3FusionEncoder.validRows(p, 2));
        assertArrayEquals(rows, CudaSam3FusionEncoder.validRows(new Prompt(rows, new boolean[4]), 2));
    }
}
