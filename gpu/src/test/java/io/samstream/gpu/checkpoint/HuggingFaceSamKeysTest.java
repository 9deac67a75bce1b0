package io.samstream.gpu.checkpoint;

import static io.samstream.gpu.checkpoint.CheckpointAssertions.assertFails;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.gpu.model.RandomSamWeights;
import io.samstream.gpu.model.SamCheckpointSchema;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.model.SamConfigInference;
import io.samstream.gpu.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HuggingFaceSamKeysTest {
    @TempDir
    Path dir;

    /**
     * Meta name to Hugging Face name the way transformers' convert_sam_to_hf.py renames a Meta
     * checkpoint: ordered substring replacements, then the hypernetwork MLP layers, then the tied copy
     * of the positional matrix. Written independently of the class under test.
     */
    static Map<String, Tensor> toHuggingFace(Map<String, Tensor> meta) {
        String[][] replacements = {
            {"iou_prediction_head.layers.0", "iou_prediction_head.proj_in"},
            {"iou_prediction_head.layers.1", "iou_prediction_head.layers.0"},
            {"iou_prediction_head.layers.2", "iou_prediction_head.proj_out"},
            {"mask_decoder.output_upscaling.0", "mask_decoder.upscale_conv1"},
            {"mask_decoder.output_upscaling.1", "mask_decoder.upscale_layer_norm"},
            {"mask_decoder.output_upscaling.3", "mask_decoder.upscale_conv2"},
            {"mask_downscaling.0", "mask_embed.conv1"},
            {"mask_downscaling.1", "mask_embed.layer_norm1"},
            {"mask_downscaling.3", "mask_embed.conv2"},
            {"mask_downscaling.4", "mask_embed.layer_norm2"},
            {"mask_downscaling.6", "mask_embed.conv3"},
            {"point_embeddings", "point_embed"},
            {"pe_layer.positional_encoding_gaussian_matrix", "shared_embedding.positional_embedding"},
            {"image_encoder", "vision_encoder"},
            {"neck.0", "neck.conv1"},
            {"neck.1", "neck.layer_norm1"},
            {"neck.2", "neck.conv2"},
            {"neck.3", "neck.layer_norm2"},
            {"patch_embed.proj", "patch_embed.projection"},
            {".norm", ".layer_norm"},
            {"blocks", "layers"},
        };
        Pattern hyper = Pattern.compile(".*output_hypernetworks_mlps\\.(\\d+)\\.layers\\.(\\d+).*");
        Map<String, Tensor> hf = new LinkedHashMap<>();
        meta.forEach((key, value) -> {
            String k = key;
            for (String[] r : replacements) {
                k = k.replace(r[0], r[1]);
            }
            Matcher m = hyper.matcher(k);
            if (m.matches()) {
                String layer = m.group(2);
                k = switch (layer) {
                    case "0" -> k.replace("layers.0", "proj_in");
                    case "1" -> k.replace("layers.1", "layers.0");
                    default -> k.replace("layers.2", "proj_out");
                };
            }
            hf.put(k, value);
        });
        hf.put("shared_image_embedding.positional_embedding", hf.get("prompt_encoder.shared_embedding.positional_embedding"));
        return hf;
    }

    @Test
    void everyHuggingFaceNameOfAFullModelMapsBackToMetas() {
        SamConfig config = RandomSamWeights.tinyConfig();
        Map<String, Tensor> meta = RandomSamWeights.tensors(config, 7);
        Map<String, Tensor> hf = toHuggingFace(meta);
        assertEquals(meta.size() + 1, hf.size(), "the tied positional matrix appears twice");
        assertTrue(HuggingFaceSamKeys.usesHuggingFaceNames(hf.keySet()));
        assertFalse(HuggingFaceSamKeys.usesHuggingFaceNames(meta.keySet()));

        Map<String, String> names = HuggingFaceSamKeys.metaNames(hf.keySet());
        assertEquals(hf.keySet(), names.keySet(), "the table knows every Hugging Face key");

        Map<String, Tensor> back = HuggingFaceSamKeys.toMetaNames(Path.of("hf.safetensors"), hf);
        assertEquals(meta.keySet(), back.keySet());
        meta.forEach((k, t) -> assertSame(t, back.get(k), k));
    }

    @Test
    void namesFromTransformersModelingSamMapAsExpected() {
        List<String[]> pairs = List.of(
                new String[] {"vision_encoder.patch_embed.projection.weight", "image_encoder.patch_embed.proj.weight"},
                new String[] {"vision_encoder.pos_embed", "image_encoder.pos_embed"},
                new String[] {"vision_encoder.layers.3.layer_norm1.bias", "image_encoder.blocks.3.norm1.bias"},
                new String[] {"vision_encoder.layers.0.attn.qkv.weight", "image_encoder.blocks.0.attn.qkv.weight"},
                new String[] {"vision_encoder.layers.0.attn.proj.bias", "image_encoder.blocks.0.attn.proj.bias"},
                new String[] {"vision_encoder.layers.11.attn.rel_pos_w", "image_encoder.blocks.11.attn.rel_pos_w"},
                new String[] {"vision_encoder.layers.2.mlp.lin2.bias", "image_encoder.blocks.2.mlp.lin2.bias"},
                new String[] {"vision_encoder.neck.conv1.weight", "image_encoder.neck.0.weight"},
                new String[] {"vision_encoder.neck.layer_norm2.bias", "image_encoder.neck.3.bias"},
                new String[] {"shared_image_embedding.positional_embedding",
                    "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix"},
                new String[] {"prompt_encoder.shared_embedding.positional_embedding",
                    "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix"},
                new String[] {"prompt_encoder.point_embed.3.weight", "prompt_encoder.point_embeddings.3.weight"},
                new String[] {"prompt_encoder.not_a_point_embed.weight", "prompt_encoder.not_a_point_embed.weight"},
                new String[] {"prompt_encoder.no_mask_embed.weight", "prompt_encoder.no_mask_embed.weight"},
                new String[] {"prompt_encoder.mask_embed.conv1.weight", "prompt_encoder.mask_downscaling.0.weight"},
                new String[] {"prompt_encoder.mask_embed.layer_norm2.weight", "prompt_encoder.mask_downscaling.4.weight"},
                new String[] {"prompt_encoder.mask_embed.conv3.bias", "prompt_encoder.mask_downscaling.6.bias"},
                new String[] {"mask_decoder.iou_token.weight", "mask_decoder.iou_token.weight"},
                new String[] {"mask_decoder.transformer.layers.1.layer_norm4.weight",
                    "mask_decoder.transformer.layers.1.norm4.weight"},
                new String[] {"mask_decoder.transformer.layers.0.cross_attn_image_to_token.out_proj.bias",
                    "mask_decoder.transformer.layers.0.cross_attn_image_to_token.out_proj.bias"},
                new String[] {"mask_decoder.transformer.layers.0.mlp.lin1.weight",
                    "mask_decoder.transformer.layers.0.mlp.lin1.weight"},
                new String[] {"mask_decoder.transformer.final_attn_token_to_image.k_proj.weight",
                    "mask_decoder.transformer.final_attn_token_to_image.k_proj.weight"},
                new String[] {"mask_decoder.transformer.layer_norm_final_attn.weight",
                    "mask_decoder.transformer.norm_final_attn.weight"},
                new String[] {"mask_decoder.upscale_conv1.weight", "mask_decoder.output_upscaling.0.weight"},
                new String[] {"mask_decoder.upscale_layer_norm.bias", "mask_decoder.output_upscaling.1.bias"},
                new String[] {"mask_decoder.upscale_conv2.bias", "mask_decoder.output_upscaling.3.bias"},
                new String[] {"mask_decoder.output_hypernetworks_mlps.2.proj_in.weight",
                    "mask_decoder.output_hypernetworks_mlps.2.layers.0.weight"},
                new String[] {"mask_decoder.output_hypernetworks_mlps.2.layers.0.weight",
                    "mask_decoder.output_hypernetworks_mlps.2.layers.1.weight"},
                new String[] {"mask_decoder.output_hypernetworks_mlps.2.proj_out.weight",
                    "mask_decoder.output_hypernetworks_mlps.2.layers.2.weight"},
                new String[] {"mask_decoder.iou_prediction_head.proj_in.bias", "mask_decoder.iou_prediction_head.layers.0.bias"},
                new String[] {"mask_decoder.iou_prediction_head.layers.0.bias", "mask_decoder.iou_prediction_head.layers.1.bias"},
                new String[] {"mask_decoder.iou_prediction_head.proj_out.bias", "mask_decoder.iou_prediction_head.layers.2.bias"});
        List<String> keys = new ArrayList<>();
        pairs.forEach(p -> keys.add(p[0]));

        Map<String, String> names = HuggingFaceSamKeys.metaNames(keys);

        for (String[] p : pairs) {
            assertEquals(p[1], names.get(p[0]), p[0]);
        }
    }

    @Test
    void outputLayerIndexFollowsTheNumberOfHiddenLayers() {
        Map<String, String> names = HuggingFaceSamKeys.metaNames(List.of(
                "mask_decoder.iou_prediction_head.proj_in.weight",
                "mask_decoder.iou_prediction_head.layers.0.weight",
                "mask_decoder.iou_prediction_head.layers.1.weight",
                "mask_decoder.iou_prediction_head.proj_out.weight",
                "mask_decoder.output_hypernetworks_mlps.0.proj_in.weight",
                "mask_decoder.output_hypernetworks_mlps.0.proj_out.weight"));

        assertEquals("mask_decoder.iou_prediction_head.layers.2.weight",
                names.get("mask_decoder.iou_prediction_head.layers.1.weight"));
        assertEquals("mask_decoder.iou_prediction_head.layers.3.weight",
                names.get("mask_decoder.iou_prediction_head.proj_out.weight"));
        assertEquals("mask_decoder.output_hypernetworks_mlps.0.layers.1.weight",
                names.get("mask_decoder.output_hypernetworks_mlps.0.proj_out.weight"), "a 2-layer head");
    }

    @Test
    void unknownKeysAreKeptAndTiedCopiesMustAgree() {
        Path source = Path.of("hf.bin");
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        tensors.put("vision_encoder.pos_embed", new Tensor(new float[] {1f}, 1));
        tensors.put("vision_encoder.some_new_thing", new Tensor(new float[] {2f}, 1));
        tensors.put("shared_image_embedding.positional_embedding", new Tensor(new float[] {3f, 4f}, 2, 1));
        tensors.put("prompt_encoder.shared_embedding.positional_embedding", new Tensor(new float[] {3f, 4f}, 2, 1));

        Map<String, Tensor> meta = HuggingFaceSamKeys.toMetaNames(source, tensors);
        assertEquals(List.of("image_encoder.pos_embed", "vision_encoder.some_new_thing",
                "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix"), new ArrayList<>(meta.keySet()));

        tensors.put("prompt_encoder.shared_embedding.positional_embedding", new Tensor(new float[] {3f, 5f}, 2, 1));
        assertFails(source, () -> HuggingFaceSamKeys.toMetaNames(source, tensors),
                "shared_image_embedding.positional_embedding and prompt_encoder.shared_embedding.positional_embedding",
                "different values");
    }

    @Test
    void mixedNamingIsRefused() {
        Path source = Path.of("mixed.safetensors");
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        tensors.put("vision_encoder.pos_embed", new Tensor(new float[] {1f}, 1));
        tensors.put("image_encoder.pos_embed", new Tensor(new float[] {1f}, 1));

        assertFails(source, () -> HuggingFaceSamKeys.toMetaNames(source, tensors), "mixes Hugging Face key names");
    }

    @Test
    void huggingFaceFilesInBothFormatsLoadUnderMetaNamesAndInferTheirConfig() throws IOException {
        SamConfig config = RandomSamWeights.tinyConfig();
        Map<String, Tensor> meta = RandomSamWeights.tensors(config, 11);
        Map<String, Tensor> hf = toHuggingFace(meta);

        Path safetensors = dir.resolve("model.safetensors");
        SafetensorsWriter.write(safetensors, hf);
        Path torch = dir.resolve("pytorch_model.bin");
        TorchSaveWriter w = new TorchSaveWriter("archive");
        w.write(torch, w.stateDictOf(hf));

        for (Path file : List.of(safetensors, torch)) {
            StateDict sd = CheckpointLoader.load(file);
            assertEquals(SamCheckpointSchema.expectedShapes(config).keySet(), sd.keys(), file.toString());
            meta.forEach((k, t) -> assertEquals(0, java.util.Arrays.compare(t.data(), sd.get(k).data()), k));
            assertEquals(config, SamConfigInference.infer(sd));
        }
    }
}
