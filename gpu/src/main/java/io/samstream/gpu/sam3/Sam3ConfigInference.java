package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.CheckpointException;
import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads a {@link Sam3Config} from the tensor shapes of a SAM 3 state_dict ({@code sam3.pt}, or an image model's).
 *
 * <p>The shapes tell nearly everything. The ViT's width, patch size, depth and MLP width come from its weights;
 * its heads, window size, global blocks and input size from the rotary tables every block stores
 * ({@code attn.freqs_cis}, [tokens, head width / 2] complex): a windowed block's table covers a window, a global
 * block's the whole map. The neck's levels and width, the text encoder's vocabulary, context, width, depth and
 * MLP; the detector's width, layers, feed-forward widths, queries and its attention heads (the box relative
 * position bias has one output per head); the geometry encoder's layers and pooled box size, the mask head's
 * convolutions and the scorer's MLP. The text encoder's heads are not in any shape: they follow CLIP's and SAM
 * 3's head width of 64 (16 heads at width 1024; one head up to width 64).
 *
 * <p>A state_dict without the rotary tables (one converted without buffers) is taken as Meta's release when its
 * ViT is 1024 wide and 32 deep with patch 14 (16 heads, windows of 24, global blocks 7, 15, 23, 31, input 1008);
 * any other needs them. Errors name the key at fault.
 */
public final class Sam3ConfigInference {
    private Sam3ConfigInference() {}

    /** Text attention heads are 64 wide. */
    static final int TEXT_HEAD_WIDTH = 64;

    /** Meta's release: {@code _create_vit_backbone}. */
    public static final Sam3Config.Vision RELEASE_VIT = new Sam3Config.Vision(1008, 14, 1024, 32, 16, 4736, 24,
            new int[] {7, 15, 23, 31}, 24, 4);

    /**
     * Meta's release detector (tools/sam3_fixtures/make_sam3_fixtures.py's "release": width 256, 8 heads, a fusion
     * encoder of 6 layers with a 2048 feed-forward, 6 decoder layers, 200 queries, 3 geometry layers, scoring hidden
     * 2048; ROI 7 and 3 pixel-decoder convolutions), for tests and benchmarks at the release's shapes.
     */
    public static final Sam3Config.Detector RELEASE_DETECTOR = new Sam3Config.Detector(256, 8, 6, 2048, 6, 2048, 200,
            3, 2048, 7, 3, 2048);

    /** The configuration of a SAM 3 state_dict (with or without the "detector." prefix). */
    public static Sam3Config infer(StateDict checkpoint) {
        StateDict sd = Sam3Checkpoint.detector(checkpoint);
        Sam3Config.Detector detector = detector(sd);
        Sam3Config.Vision vision = vision(sd, detector.dModel());
        Sam3Config.Text text = text(sd, detector.dModel());
        return new Sam3Config(vision, text, detector);
    }

    /**
     * The tracker's configuration ({@code sam3.pt}'s {@code tracker.*} keys) for the detector {@code detector} of
     * the same checkpoint: its grid is the ViT's and its width the detector's (the second neck feeds it).
     */
    public static Sam3TrackerConfig inferTracker(StateDict checkpoint, Sam3Config detector) {
        StateDict sd = Sam3Checkpoint.tracker(checkpoint);
        StateDict det = Sam3Checkpoint.detector(checkpoint);
        if (!det.hasPrefix(Sam3Neck.TRACKER)) {
            throw bad(checkpoint, "has a tracker but no tracker neck (detector." + Sam3Neck.TRACKER + "*)");
        }
        int hidden = sd.get("no_mem_embed").dim(-1);
        if (hidden != detector.detector().dModel()) {
            throw bad(checkpoint, "tracker.no_mem_embed is " + hidden + " wide but the detector (and its second neck) "
                    + detector.detector().dModel());
        }
        Tensor tpos = sd.get("maskmem_tpos_enc");
        if (tpos.rank() != 4 || tpos.dim(1) != 1 || tpos.dim(2) != 1) {
            throw bad(checkpoint, "tracker.maskmem_tpos_enc has shape " + tpos.shapeString()
                    + " where [memories, 1, 1, width] was expected");
        }
        int memDim = tpos.dim(3);
        int numMaskmem = tpos.dim(0);
        int layers = sd.countIndexed("memory_attention.layers.");
        if (layers == 0) {
            throw bad(checkpoint, "no tracker.transformer.encoder.layers.* keys");
        }
        int ffn = sd.get("memory_attention.layers.0.linear1.weight").dim(0);
        for (int i = 0; i < layers; i++) {
            String p = "memory_attention.layers." + i + ".";
            sd.get(p + "cross_attn_image.k_proj.weight", hidden, memDim);
            sd.get(p + "linear1.weight", ffn, hidden);
        }
        int decoderMlp = sd.get("sam_mask_decoder.transformer.layers.0.mlp.layers.0.weight").dim(0);
        int iouHidden = sd.get("sam_mask_decoder.iou_prediction_head.layers.0.weight").dim(0);
        int down = 0;
        while (sd.contains("memory_encoder.mask_downsampler.encoder." + (3 * down) + ".weight")) {
            down++;
        }
        down--; // the last one found is the final 1x1 projection
        if (down < 1 || (1 << down) != 16) {
            throw bad(checkpoint, "the tracker's mask downsampler has " + Math.max(down, 0) + " stride-2 "
                    + "convolutions (tracker.maskmem_backbone.mask_downsampler.encoder.*); SAM 3's has 4 (stride 16)");
        }
        int kernel = sd.get("memory_encoder.mask_downsampler.encoder.0.weight").dim(-1);
        int fuser = sd.countIndexed("memory_encoder.fuser.layers.");
        int fuserKernel = sd.get("memory_encoder.fuser.layers.0.dwconv.weight").dim(-1);
        int maskInChans = sd.get("sam_prompt_encoder.mask_downscaling.3.weight").dim(0);
        sd.get("mask_downsample.weight", 1, 1, 4, 4);
        if (hidden % memDim != 0 || hidden % (2 * Sam3TrackerConfig.MEM_ATTN_HEADS) != 0) {
            throw bad(checkpoint, "tracker width " + hidden + " is not a multiple of the memory width " + memDim);
        }
        return new Sam3TrackerConfig(detector.vision().imageSize(), detector.vision().grid(), hidden, memDim,
                numMaskmem, layers, ffn, decoderMlp, iouHidden, down, kernel, fuser, fuserKernel, maskInChans);
    }

    private static Sam3Config.Vision vision(StateDict sd, int dModel) {
        String trunk = Sam3Checkpoint.TRUNK;
        Tensor patch = sd.get(trunk + "patch_embed.proj.weight");
        if (patch.rank() != 4 || patch.dim(1) != 3 || patch.dim(2) != patch.dim(3)) {
            throw bad(sd, trunk + "patch_embed.proj.weight has shape " + patch.shapeString()
                    + " where [C, 3, p, p] was expected");
        }
        int embed = patch.dim(0);
        int patchSize = patch.dim(2);
        int depth = sd.countIndexed(trunk + "blocks.");
        if (depth == 0) {
            throw bad(sd, "no " + trunk + "blocks.* keys");
        }
        Tensor pos = sd.get(trunk + "pos_embed");
        int positions = pos.dim(1) - 1;
        int pretrain = (int) Math.round(Math.sqrt(positions));
        if (pos.rank() != 3 || pos.dim(2) != embed || pretrain * pretrain != positions) {
            throw bad(sd, trunk + "pos_embed has shape " + pos.shapeString() + " where [1, 1 + n*n, " + embed
                    + "] (a class token and a square grid) was expected");
        }
        sd.get(trunk + "ln_pre.weight", embed);
        int mlp = sd.get(trunk + "blocks.0.mlp.fc1.weight").dim(0);
        for (int i = 0; i < depth; i++) {
            sd.get(trunk + "blocks." + i + ".attn.qkv.weight", 3 * embed, embed);
            sd.get(trunk + "blocks." + i + ".mlp.fc1.weight", mlp, embed);
        }
        int levels = sd.countIndexed("backbone.vision_backbone.convs.");
        if (levels < 3) {
            throw bad(sd, "the neck has " + levels + " levels (backbone.vision_backbone.convs.*); SAM 3 uses 4 "
                    + "(scales 4, 2, 1, 0.5)");
        }
        String neck = "backbone.vision_backbone.convs.";
        sd.get(neck + "0.dconv_2x2_0.weight", embed, embed / 2, 2, 2);
        sd.get(neck + "0.dconv_2x2_1.weight", embed / 2, embed / 4, 2, 2);
        sd.get(neck + "0.conv_1x1.weight", dModel, embed / 4, 1, 1);
        sd.get(neck + "1.dconv_2x2.weight", embed, embed / 2, 2, 2);
        sd.get(neck + "1.conv_1x1.weight", dModel, embed / 2, 1, 1);
        sd.get(neck + "2.conv_1x1.weight", dModel, embed, 1, 1);

        String firstTable = trunk + "blocks.0.attn.freqs_cis";
        if (!sd.contains(firstTable)) {
            Sam3Config.Vision r = RELEASE_VIT;
            if (embed == r.embedDim() && depth == r.depth() && patchSize == r.patchSize() && mlp == r.mlpHidden()
                    && pretrain == r.pretrainGrid()) {
                return new Sam3Config.Vision(r.imageSize(), r.patchSize(), r.embedDim(), r.depth(), r.heads(),
                        r.mlpHidden(), r.windowSize(), r.globalBlocks(), r.pretrainGrid(), levels);
            }
            throw bad(sd, "missing key " + firstTable + ": without the rotary tables only Meta's release shapes "
                    + "(ViT 1024 x 32, patch 14) tell the heads, windows and input size; this ViT is " + embed
                    + " x " + depth + ", patch " + patchSize);
        }
        int[] tokens = new int[depth];
        int headDim = 0;
        for (int i = 0; i < depth; i++) {
            String key = trunk + "blocks." + i + ".attn.freqs_cis";
            Tensor t = sd.get(key);
            if (t.rank() != 3 || t.dim(2) != 2) {
                throw bad(sd, key + " has shape " + t.shapeString() + " where [tokens, head width / 2, 2] (complex"
                        + " values) was expected");
            }
            if (i > 0 && 2 * t.dim(1) != headDim) {
                throw bad(sd, key + " is for heads " + 2 * t.dim(1) + " wide, block 0's for " + headDim);
            }
            headDim = 2 * t.dim(1);
            tokens[i] = t.dim(0);
        }
        if (headDim == 0 || embed % headDim != 0 || headDim % 4 != 0) {
            throw bad(sd, "the rotary tables are for heads " + headDim + " wide, which does not divide the ViT "
                    + "width " + embed + " or is not a multiple of 4");
        }
        int globalTokens = Arrays.stream(tokens).max().getAsInt();
        int grid = squareSide(sd, globalTokens, trunk + "blocks.*.attn.freqs_cis");
        List<Integer> global = new ArrayList<>();
        int window = 0;
        for (int i = 0; i < depth; i++) {
            if (tokens[i] == globalTokens) {
                global.add(i);
            } else {
                int w = squareSide(sd, tokens[i], trunk + "blocks." + i + ".attn.freqs_cis");
                if (window != 0 && w != window) {
                    throw bad(sd, "windowed blocks of " + window + " and " + w + " tokens a side (block " + i + ")");
                }
                window = w;
            }
        }
        if (window == 0) {
            throw bad(sd, "every block of the ViT attends globally; SAM 3's windowed blocks are missing (the "
                    + "rotary tables all cover " + grid + " x " + grid + " tokens)");
        }
        return new Sam3Config.Vision(grid * patchSize, patchSize, embed, depth, embed / headDim, mlp, window,
                global.stream().mapToInt(Integer::intValue).toArray(), pretrain, levels);
    }

    private static int squareSide(StateDict sd, int tokens, String where) {
        int side = (int) Math.round(Math.sqrt(tokens));
        if (side * side != tokens) {
            throw bad(sd, where + " covers " + tokens + " tokens, not a square map");
        }
        return side;
    }

    private static Sam3Config.Text text(StateDict sd, int dModel) {
        String p = "backbone.language_backbone.";
        Tensor embedding = sd.get(p + "encoder.token_embedding.weight");
        int vocab = embedding.dim(0);
        int width = embedding.dim(1);
        int context = sd.get(p + "encoder.positional_embedding").dim(0);
        sd.get(p + "encoder.positional_embedding", context, width);
        int layers = sd.countIndexed(p + "encoder.transformer.resblocks.");
        if (layers == 0) {
            throw bad(sd, "no " + p + "encoder.transformer.resblocks.* keys");
        }
        int mlp = sd.get(p + "encoder.transformer.resblocks.0.mlp.c_fc.weight").dim(0);
        for (int i = 0; i < layers; i++) {
            String r = p + "encoder.transformer.resblocks." + i + ".";
            sd.get(r + "attn.in_proj_weight", 3 * width, width);
            sd.get(r + "mlp.c_fc.weight", mlp, width);
        }
        int projection = sd.get(p + "encoder.text_projection").dim(1);
        sd.get(p + "resizer.weight", dModel, width);
        int heads = width <= TEXT_HEAD_WIDTH ? 1 : width / TEXT_HEAD_WIDTH;
        if (width % heads != 0) {
            throw bad(sd, "text width " + width + " is not a multiple of the head width " + TEXT_HEAD_WIDTH);
        }
        return new Sam3Config.Text(vocab, context, width, layers, heads, mlp, projection);
    }

    private static Sam3Config.Detector detector(StateDict sd) {
        String dec = "transformer.decoder.";
        Tensor queries = sd.get(dec + "query_embed.weight");
        int d = queries.dim(1);
        int heads = sd.get(dec + "boxRPB_embed_x.layers.1.weight").dim(0);
        if (heads == 0 || d % heads != 0) {
            throw bad(sd, dec + "boxRPB_embed_x.layers.1.weight gives " + heads + " attention heads, which do not "
                    + "divide the width " + d);
        }
        sd.get(dec + "reference_points.weight", queries.dim(0), 4);
        sd.get(dec + "presence_token.weight", 1, d);
        int encoderLayers = sd.countIndexed("transformer.encoder.layers.");
        int decoderLayers = sd.countIndexed(dec + "layers.");
        int geometryLayers = sd.countIndexed("geometry_encoder.encode.");
        if (encoderLayers == 0 || decoderLayers == 0) {
            throw bad(sd, "the detector has " + encoderLayers + " encoder and " + decoderLayers + " decoder layers"
                    + " (transformer.encoder.layers.*, transformer.decoder.layers.*)");
        }
        int encoderFfn = sd.get("transformer.encoder.layers.0.linear1.weight").dim(0);
        int decoderFfn = sd.get(dec + "layers.0.linear1.weight").dim(0);
        int geometryFfn = geometryLayers == 0 ? 0 : sd.get("geometry_encoder.encode.0.linear1.weight").dim(0);
        for (int i = 0; i < encoderLayers; i++) {
            sd.get("transformer.encoder.layers." + i + ".self_attn.in_proj_weight", 3 * d, d);
            sd.get("transformer.encoder.layers." + i + ".cross_attn_image.in_proj_weight", 3 * d, d);
            sd.get("transformer.encoder.layers." + i + ".linear1.weight", encoderFfn, d);
        }
        for (int i = 0; i < decoderLayers; i++) {
            sd.get(dec + "layers." + i + ".self_attn.in_proj_weight", 3 * d, d);
            sd.get(dec + "layers." + i + ".ca_text.in_proj_weight", 3 * d, d);
            sd.get(dec + "layers." + i + ".cross_attn.in_proj_weight", 3 * d, d);
            sd.get(dec + "layers." + i + ".linear1.weight", decoderFfn, d);
        }
        Tensor roi = sd.get("geometry_encoder.boxes_pool_project.weight");
        if (roi.rank() != 4 || roi.dim(0) != d || roi.dim(1) != d || roi.dim(2) != roi.dim(3)) {
            throw bad(sd, "geometry_encoder.boxes_pool_project.weight has shape " + roi.shapeString()
                    + " where [" + d + ", " + d + ", r, r] was expected");
        }
        int convs = sd.countIndexed("segmentation_head.pixel_decoder.conv_layers.");
        if (convs < 2) {
            throw bad(sd, "the mask head's pixel decoder has " + convs + " convolutions "
                    + "(segmentation_head.pixel_decoder.conv_layers.*); it upsamples twice");
        }
        sd.get("segmentation_head.instance_seg_head.weight", d, d, 1, 1);
        int scoring = sd.get("dot_prod_scoring.prompt_mlp.layers.0.weight").dim(0);
        sd.get("dot_prod_scoring.hs_proj.weight", d, d);
        return new Sam3Config.Detector(d, heads, encoderLayers, encoderFfn, decoderLayers, decoderFfn,
                queries.dim(0), geometryLayers, geometryFfn, roi.dim(2), convs, scoring);
    }

    private static CheckpointException bad(StateDict sd, String problem) {
        return new CheckpointException(sd.source(), problem);
    }
}
