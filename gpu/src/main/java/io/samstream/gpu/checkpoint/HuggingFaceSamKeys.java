package io.samstream.gpu.checkpoint;

import io.samstream.gpu.tensor.Tensor;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Maps the key names of Hugging Face transformers' {@code SamModel} ({@code facebook/sam-vit-base},
 * {@code -large}, {@code -huge}, SlimSAM, ...) to Meta's segment-anything names, which the rest of
 * samstream uses.
 *
 * <p>The table mirrors the module names of transformers' {@code modeling_sam.py} and the renaming in its
 * {@code convert_sam_to_hf.py}. Two mappings depend on more than one key:
 * <ul>
 *   <li>transformers' feed-forward heads ({@code SamFeedForward}) name their layers {@code proj_in},
 *       {@code layers.0..n-3}, {@code proj_out}, where Meta's {@code MLP} has {@code layers.0..n-1}; the
 *       index of {@code proj_out} follows from how many hidden layers the head has.</li>
 *   <li>{@code shared_image_embedding.positional_embedding} and
 *       {@code prompt_encoder.shared_embedding.positional_embedding} are one tied buffer, Meta's
 *       {@code prompt_encoder.pe_layer.positional_encoding_gaussian_matrix}; files may hold either or
 *       both, and a second identical copy is dropped.</li>
 * </ul>
 */
public final class HuggingFaceSamKeys {
    private static final Logger log = LoggerFactory.getLogger(HuggingFaceSamKeys.class);

    private static final String GAUSSIAN_MATRIX = "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix";
    private static final String PARAM = "(weight|bias)";
    private static final String ATTN_PROJ = "(q_proj|k_proj|v_proj|out_proj)";

    /** Hugging Face name pattern to Meta name, in SamModel's module order. */
    private static final List<Rename> TABLE = List.of(
            // vision_encoder (SamVisionEncoder) -> image_encoder (ImageEncoderViT)
            new Rename("vision_encoder\\.patch_embed\\.projection\\." + PARAM, "image_encoder.patch_embed.proj.$1"),
            new Rename("vision_encoder\\.pos_embed", "image_encoder.pos_embed"),
            new Rename("vision_encoder\\.layers\\.(\\d+)\\.layer_norm([12])\\." + PARAM,
                    "image_encoder.blocks.$1.norm$2.$3"),
            new Rename("vision_encoder\\.layers\\.(\\d+)\\.attn\\.(qkv|proj)\\." + PARAM,
                    "image_encoder.blocks.$1.attn.$2.$3"),
            new Rename("vision_encoder\\.layers\\.(\\d+)\\.attn\\.rel_pos_([hw])", "image_encoder.blocks.$1.attn.rel_pos_$2"),
            new Rename("vision_encoder\\.layers\\.(\\d+)\\.mlp\\.(lin[12])\\." + PARAM, "image_encoder.blocks.$1.mlp.$2.$3"),
            new Rename("vision_encoder\\.neck\\.conv1\\.weight", "image_encoder.neck.0.weight"),
            new Rename("vision_encoder\\.neck\\.layer_norm1\\." + PARAM, "image_encoder.neck.1.$1"),
            new Rename("vision_encoder\\.neck\\.conv2\\.weight", "image_encoder.neck.2.weight"),
            new Rename("vision_encoder\\.neck\\.layer_norm2\\." + PARAM, "image_encoder.neck.3.$1"),
            // shared_image_embedding (SamPositionalEmbedding), tied into the prompt encoder
            new Rename("shared_image_embedding\\.positional_embedding", GAUSSIAN_MATRIX),
            new Rename("prompt_encoder\\.shared_embedding\\.positional_embedding", GAUSSIAN_MATRIX),
            // prompt_encoder (SamPromptEncoder, SamMaskEmbedding) -> prompt_encoder (PromptEncoder)
            new Rename("prompt_encoder\\.point_embed\\.(\\d+)\\.weight", "prompt_encoder.point_embeddings.$1.weight"),
            new Rename("prompt_encoder\\.not_a_point_embed\\.weight", "prompt_encoder.not_a_point_embed.weight"),
            new Rename("prompt_encoder\\.mask_embed\\.conv1\\." + PARAM, "prompt_encoder.mask_downscaling.0.$1"),
            new Rename("prompt_encoder\\.mask_embed\\.layer_norm1\\." + PARAM, "prompt_encoder.mask_downscaling.1.$1"),
            new Rename("prompt_encoder\\.mask_embed\\.conv2\\." + PARAM, "prompt_encoder.mask_downscaling.3.$1"),
            new Rename("prompt_encoder\\.mask_embed\\.layer_norm2\\." + PARAM, "prompt_encoder.mask_downscaling.4.$1"),
            new Rename("prompt_encoder\\.mask_embed\\.conv3\\." + PARAM, "prompt_encoder.mask_downscaling.6.$1"),
            new Rename("prompt_encoder\\.no_mask_embed\\.weight", "prompt_encoder.no_mask_embed.weight"),
            // mask_decoder (SamMaskDecoder, SamTwoWayTransformer) -> mask_decoder (MaskDecoder, TwoWayTransformer)
            new Rename("mask_decoder\\.iou_token\\.weight", "mask_decoder.iou_token.weight"),
            new Rename("mask_decoder\\.mask_tokens\\.weight", "mask_decoder.mask_tokens.weight"),
            new Rename("mask_decoder\\.transformer\\.layers\\.(\\d+)\\.(self_attn|cross_attn_token_to_image"
                    + "|cross_attn_image_to_token)\\." + ATTN_PROJ + "\\." + PARAM,
                    "mask_decoder.transformer.layers.$1.$2.$3.$4"),
            new Rename("mask_decoder\\.transformer\\.layers\\.(\\d+)\\.layer_norm([1-4])\\." + PARAM,
                    "mask_decoder.transformer.layers.$1.norm$2.$3"),
            new Rename("mask_decoder\\.transformer\\.layers\\.(\\d+)\\.mlp\\.(lin[12])\\." + PARAM,
                    "mask_decoder.transformer.layers.$1.mlp.$2.$3"),
            new Rename("mask_decoder\\.transformer\\.final_attn_token_to_image\\." + ATTN_PROJ + "\\." + PARAM,
                    "mask_decoder.transformer.final_attn_token_to_image.$1.$2"),
            new Rename("mask_decoder\\.transformer\\.layer_norm_final_attn\\." + PARAM,
                    "mask_decoder.transformer.norm_final_attn.$1"),
            new Rename("mask_decoder\\.upscale_conv1\\." + PARAM, "mask_decoder.output_upscaling.0.$1"),
            new Rename("mask_decoder\\.upscale_layer_norm\\." + PARAM, "mask_decoder.output_upscaling.1.$1"),
            new Rename("mask_decoder\\.upscale_conv2\\." + PARAM, "mask_decoder.output_upscaling.3.$1"));

    /**
     * transformers' SamFeedForward (output_hypernetworks_mlps.N, iou_prediction_head):
     * proj_in, layers.K, proj_out -> Meta's MLP layers.0, layers.K+1, layers.(hidden layers + 1).
     */
    private static final Pattern FEED_FORWARD = Pattern.compile(
            "(mask_decoder\\.(?:output_hypernetworks_mlps\\.\\d+|iou_prediction_head))\\.(proj_in|layers\\.(\\d+)|proj_out)\\."
                    + PARAM);

    private record Rename(Pattern huggingFace, String meta) {
        Rename(String huggingFace, String meta) {
            this(Pattern.compile(huggingFace), meta);
        }
    }

    private HuggingFaceSamKeys() {}

    /** Whether {@code keys} follow transformers' naming (a {@code vision_encoder} instead of an {@code image_encoder}). */
    public static boolean usesHuggingFaceNames(Collection<String> keys) {
        for (String k : keys) {
            if (k.startsWith("vision_encoder.") || k.startsWith("shared_image_embedding.")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The Meta name of every Hugging Face key in {@code keys} that the table knows; keys it does not know
     * are absent from the result. The whole key set is needed to number feed-forward output layers.
     */
    public static Map<String, String> metaNames(Collection<String> keys) {
        Map<String, Set<String>> hiddenLayers = new HashMap<>();
        for (String k : keys) {
            Matcher m = FEED_FORWARD.matcher(k);
            if (m.matches() && m.group(3) != null) {
                hiddenLayers.computeIfAbsent(m.group(1), o -> new HashSet<>()).add(m.group(3));
            }
        }
        Map<String, String> names = new LinkedHashMap<>();
        for (String k : keys) {
            String meta = metaName(k, hiddenLayers);
            if (meta != null) {
                names.put(k, meta);
            }
        }
        return names;
    }

    private static String metaName(String key, Map<String, Set<String>> hiddenLayers) {
        Matcher ff = FEED_FORWARD.matcher(key);
        if (ff.matches()) {
            String owner = ff.group(1);
            int index;
            if (ff.group(2).equals("proj_in")) {
                index = 0;
            } else if (ff.group(3) != null) {
                index = Integer.parseInt(ff.group(3)) + 1;
            } else {
                index = hiddenLayers.getOrDefault(owner, Set.of()).size() + 1;
            }
            return owner + ".layers." + index + "." + ff.group(4);
        }
        for (Rename r : TABLE) {
            Matcher m = r.huggingFace().matcher(key);
            if (m.matches()) {
                return m.replaceFirst(r.meta());
            }
        }
        return null;
    }

    /**
     * {@code tensors} under Meta's names. Unknown keys are kept as they are (the schema check reports
     * what is then missing); a tied copy identical to a tensor already mapped is dropped.
     */
    public static Map<String, Tensor> toMetaNames(Path source, Map<String, Tensor> tensors) {
        for (String k : tensors.keySet()) {
            if (k.startsWith("image_encoder.")) {
                throw new CheckpointException(source, "mixes Hugging Face key names (vision_encoder.*) with"
                        + " Meta's (image_encoder.*, e.g. " + k + "); cannot tell which naming it uses");
            }
        }
        Map<String, String> names = metaNames(tensors.keySet());
        Map<String, Tensor> renamed = new LinkedHashMap<>();
        Map<String, String> origin = new HashMap<>();
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            String meta = names.get(e.getKey());
            if (meta == null) {
                log.debug("{}: keeping unrecognized Hugging Face key {}", source, e.getKey());
                meta = e.getKey();
            }
            Tensor earlier = renamed.get(meta);
            if (earlier != null) {
                if (sameValues(earlier, e.getValue())) {
                    log.debug("{}: dropping {}, a tied copy of {}", source, e.getKey(), origin.get(meta));
                    continue;
                }
                throw new CheckpointException(source, "tensors " + origin.get(meta) + " and " + e.getKey()
                        + " both stand for " + meta + " but hold different values");
            }
            renamed.put(meta, e.getValue());
            origin.put(meta, e.getKey());
        }
        return renamed;
    }

    private static boolean sameValues(Tensor a, Tensor b) {
        return a.hasShape(b.shape()) && Arrays.equals(a.data(), b.data());
    }
}
