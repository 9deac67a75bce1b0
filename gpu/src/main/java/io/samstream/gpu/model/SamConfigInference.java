package io.samstream.gpu.model;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.StateDict;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a {@link SamConfig} off the tensor shapes of a checkpoint, so vit_b, vit_l, vit_h and smaller
 * SAM-family ViTs load with no flags, then checks every tensor against {@link SamCheckpointSchema}.
 *
 * <p>What comes from where (Meta key names):
 * <ul>
 *   <li>encoder width D and patch size P: {@code image_encoder.patch_embed.proj.weight} [D, 3, P, P];
 *       input size: the side G of {@code image_encoder.pos_embed} [1, G, G, D] times P</li>
 *   <li>depth: the number of {@code image_encoder.blocks.N}; head width: columns of each block's
 *       {@code attn.rel_pos_h}, heads = D / head width</li>
 *   <li>window size and global blocks: {@code rel_pos_h} has 2 * span - 1 rows; span G means global
 *       attention, any other span is the window, which all windowed blocks must share</li>
 *   <li>MLP width: {@code mlp.lin1} rows; prompt width: {@code image_encoder.neck.0.weight} rows; mask
 *       channels: {@code prompt_encoder.mask_downscaling.3.weight} rows</li>
 *   <li>decoder depth: the number of {@code mask_decoder.transformer.layers.N}; its MLP width: their
 *       {@code mlp.lin1} rows; attention downsample: prompt width / rows of
 *       {@code cross_attn_token_to_image.q_proj}; multimask outputs: {@code mask_tokens} rows - 1; IoU
 *       head depth and width: the number and rows of {@code iou_prediction_head.layers.N}</li>
 *   <li>decoder heads: always {@value #DECODER_HEADS}. Head count only splits the projections; it
 *       leaves no trace in any shape, and every SAM release uses 8.</li>
 * </ul>
 */
public final class SamConfigInference {
    private static final Logger log = LoggerFactory.getLogger(SamConfigInference.class);

    /** Attention heads of the mask decoder in every SAM release; not recoverable from shapes. */
    public static final int DECODER_HEADS = 8;
    private static final int MAX_REPORTED_PROBLEMS = 8;

    private static final String ENC = "image_encoder.";
    private static final String DEC = "mask_decoder.";

    private SamConfigInference() {}

    /** The configuration of {@code weights}, which are then validated against it. */
    public static SamConfig infer(StateDict weights) {
        Map<String, int[]> shapes = new LinkedHashMap<>();
        for (String key : weights.keys()) {
            shapes.put(key, weights.get(key).shape());
        }
        return infer(weights.source(), shapes);
    }

    /**
     * The configuration of a checkpoint given only its tensor shapes (key to shape), validated against
     * them; {@code source} names the file in errors. Needs no tensor data, so it works for any size.
     */
    public static SamConfig infer(Path source, Map<String, int[]> shapes) {
        if (shapes.keySet().stream().anyMatch(k -> k.startsWith("image_encoder.trunk."))
                && shapes.keySet().stream().anyMatch(k -> k.startsWith("memory_attention."))) {
            throw new CheckpointException(source, "is a SAM 2 checkpoint (Hiera trunk, memory attention), not a SAM "
                    + "(v1) one: SAM 2.1 runs through io.samstream.gpu.sam2.Sam2Model, which the engine does not use "
                    + "yet");
        }
        SamConfig config = new Reader(source, shapes).read();
        validate(source, shapes, config);
        log.info("{}: {}", source, config.describe());
        return config;
    }

    /**
     * Checks that {@code shapes} hold every tensor {@code config} needs with exactly the expected shape.
     * Extra tensors are ignored (logged at debug).
     */
    public static void validate(Path source, Map<String, int[]> shapes, SamConfig config) {
        Map<String, int[]> expected = SamCheckpointSchema.expectedShapes(config);
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, int[]> e : expected.entrySet()) {
            int[] found = shapes.get(e.getKey());
            if (found == null) {
                problems.add("missing tensor " + e.getKey() + " (expected shape " + Arrays.toString(e.getValue()) + ")");
            } else if (!Arrays.equals(found, e.getValue())) {
                problems.add("tensor " + e.getKey() + " has shape " + Arrays.toString(found) + " where "
                        + Arrays.toString(e.getValue()) + " was expected");
            }
        }
        if (!problems.isEmpty()) {
            int shown = Math.min(problems.size(), MAX_REPORTED_PROBLEMS);
            String more = problems.size() > shown ? "; and " + (problems.size() - shown) + " more" : "";
            throw new CheckpointException(source, "does not match the SAM layout its shapes imply ("
                    + config.describe() + "): " + String.join("; ", problems.subList(0, shown)) + more);
        }
        for (String key : shapes.keySet()) {
            if (!expected.containsKey(key)) {
                log.debug("{}: ignoring tensor {} {}, which SAM does not use", source, key,
                        Arrays.toString(shapes.get(key)));
            }
        }
    }

    /** Reads the configuration, one dimension at a time, with an error naming the key when one is off. */
    private static final class Reader {
        private final Path source;
        private final Map<String, int[]> shapes;

        Reader(Path source, Map<String, int[]> shapes) {
            this.source = source;
            this.shapes = shapes;
        }

        SamConfig read() {
            if (!hasPrefix(ENC)) {
                throw new CheckpointException(source, "has no image_encoder.* tensors (top-level names found: "
                        + topLevelNames() + "); is this a Segment Anything checkpoint?");
            }
            int[] patch = shape(ENC + "patch_embed.proj.weight", 4);
            int dim = patch[0];
            int patchSize = patch[2];
            if (patch[1] != 3 || patch[3] != patchSize) {
                throw wrong(ENC + "patch_embed.proj.weight", patch, "[dim, 3, patch, patch]");
            }
            int[] pos = shape(ENC + "pos_embed", 4);
            int grid = pos[1];
            if (pos[0] != 1 || pos[2] != grid) {
                throw wrong(ENC + "pos_embed", pos, "[1, grid, grid, dim]");
            }
            int depth = countIndexed(ENC + "blocks.");
            if (depth == 0) {
                throw new CheckpointException(source, "has no image_encoder.blocks.N tensors: the encoder has no"
                        + " transformer blocks");
            }
            int headDim = 0;
            List<Integer> globalBlocks = new ArrayList<>();
            Map<Integer, List<Integer>> blocksBySpan = new TreeMap<>();
            for (int i = 0; i < depth; i++) {
                String key = ENC + "blocks." + i + ".attn.rel_pos_h";
                int[] relPos = shape(key, 2);
                if (relPos[0] % 2 == 0) {
                    throw wrong(key, relPos, "[2 * span - 1, head_dim] (an odd number of rows)");
                }
                if (i == 0) {
                    headDim = relPos[1];
                } else if (relPos[1] != headDim) {
                    throw new CheckpointException(source, "tensor " + key + " has head width " + relPos[1]
                            + " where block 0 has " + headDim);
                }
                int span = (relPos[0] + 1) / 2;
                if (span == grid) {
                    globalBlocks.add(i);
                } else {
                    blocksBySpan.computeIfAbsent(span, s -> new ArrayList<>()).add(i);
                }
            }
            if (headDim == 0 || dim % headDim != 0) {
                throw new CheckpointException(source, "encoder width " + dim + " (patch_embed.proj.weight) is not"
                        + " a multiple of the head width " + headDim + " (rel_pos_h columns)");
            }
            if (blocksBySpan.size() > 1) {
                throw new CheckpointException(source, "windowed encoder blocks disagree on the window size"
                        + " (rel_pos_h rows = 2 * window - 1): " + describeSpans(blocksBySpan));
            }
            int windowSize = blocksBySpan.isEmpty() ? 0 : blocksBySpan.keySet().iterator().next();
            int mlpDim = shape(ENC + "blocks.0.mlp.lin1.weight", 2)[0];
            int promptDim = shape(ENC + "neck.0.weight", 4)[0];
            int maskInChans = shape("prompt_encoder.mask_downscaling.3.weight", 4)[0];

            int decoderDepth = countIndexed(DEC + "transformer.layers.");
            if (decoderDepth == 0) {
                throw new CheckpointException(source, "has no mask_decoder.transformer.layers.N tensors: the"
                        + " mask decoder has no transformer layers");
            }
            String layer0 = DEC + "transformer.layers.0.";
            int decoderMlpDim = shape(layer0 + "mlp.lin1.weight", 2)[0];
            String crossQ = layer0 + "cross_attn_token_to_image.q_proj.weight";
            int[] cross = shape(crossQ, 2);
            int attentionWidth = cross[0];
            if (attentionWidth == 0 || promptDim % attentionWidth != 0) {
                throw wrong(crossQ, cross, "[prompt_dim / downsample, prompt_dim] with prompt_dim " + promptDim);
            }
            if (attentionWidth % DECODER_HEADS != 0) {
                throw new CheckpointException(source, "decoder cross-attention width " + attentionWidth + " ("
                        + crossQ + ") cannot be split into the " + DECODER_HEADS + " heads every SAM decoder uses");
            }
            int[] maskTokens = shape(DEC + "mask_tokens.weight", 2);
            if (maskTokens[0] < 1) {
                throw wrong(DEC + "mask_tokens.weight", maskTokens, "at least one mask token");
            }
            int iouDepth = countIndexed(DEC + "iou_prediction_head.layers.");
            if (iouDepth == 0) {
                throw new CheckpointException(source, "has no mask_decoder.iou_prediction_head.layers.N tensors");
            }
            // With a single layer the hidden width is unused; any value gives the same schema.
            int iouHidden = iouDepth > 1 ? shape(DEC + "iou_prediction_head.layers.0.weight", 2)[0] : promptDim;

            return new SamConfig(grid * patchSize, patchSize, dim, depth, dim / headDim, mlpDim, windowSize,
                    globalBlocks.stream().mapToInt(Integer::intValue).toArray(), promptDim, maskInChans,
                    decoderDepth, DECODER_HEADS, decoderMlpDim, promptDim / attentionWidth, maskTokens[0] - 1,
                    iouDepth, iouHidden);
        }

        private int[] shape(String key, int rank) {
            int[] s = shapes.get(key);
            if (s == null) {
                throw new CheckpointException(source, "missing tensor " + key + ", which the model configuration"
                        + " is read from");
            }
            if (s.length != rank) {
                throw new CheckpointException(source, "tensor " + key + " has shape " + Arrays.toString(s)
                        + " where a rank-" + rank + " tensor was expected");
            }
            return s;
        }

        private CheckpointException wrong(String key, int[] found, String expected) {
            return new CheckpointException(source, "tensor " + key + " has shape " + Arrays.toString(found)
                    + " where " + expected + " was expected");
        }

        private int countIndexed(String prefix) {
            int n = 0;
            while (hasPrefix(prefix + n + ".")) {
                n++;
            }
            return n;
        }

        private boolean hasPrefix(String prefix) {
            for (String k : shapes.keySet()) {
                if (k.startsWith(prefix)) {
                    return true;
                }
            }
            return false;
        }

        private String topLevelNames() {
            TreeSet<String> names = new TreeSet<>();
            for (String k : shapes.keySet()) {
                int dot = k.indexOf('.');
                names.add(dot < 0 ? k : k.substring(0, dot));
                if (names.size() == 8) {
                    break;
                }
            }
            return names.toString();
        }

        private static String describeSpans(Map<Integer, List<Integer>> blocksBySpan) {
            List<String> parts = new ArrayList<>();
            blocksBySpan.forEach((span, blocks) -> parts.add("window " + span + " in blocks " + blocks));
            return String.join(", ", parts);
        }
    }
}
