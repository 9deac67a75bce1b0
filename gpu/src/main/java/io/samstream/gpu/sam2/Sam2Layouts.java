package io.samstream.gpu.sam2;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.config.SafeText;
import io.samstream.gpu.checkpoint.CheckpointException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code <checkpoint>.layout.json}: the values a SAM 2 checkpoint's shapes do not tell ({@link Sam2Config.Layout}),
 * read strictly and checked, before anything is allocated, in two steps:
 * <ol>
 *   <li>{@link #read}: exactly one JSON object (no trailing data, no key twice), the known fields only, each of its
 *       type and within the bounds any model has: {@code image_size} a multiple of 32 from 32 to
 *       {@value #MAX_IMAGE_SIZE} (the releases' size: a larger input grows Hiera's global attention with the fourth
 *       power of its side), 4 window sizes of at least 1, block indices of at least 0, heads of at least 1;</li>
 *   <li>{@link #check}: against the checkpoint's tensor shapes, the rules every release follows: the heads divide
 *       Hiera's width (and so every stage's: both double per stage), the global-attention blocks are blocks of the
 *       trunk, each stage's window fits its map and the first divides it, the memory attention's heads divide the
 *       hidden width into RoPE's multiples of 4.</li>
 * </ol>
 * Every error names the file, the key, the value and the bound.
 */
public final class Sam2Layouts {
    /** The largest layout file read. */
    public static final long MAX_BYTES = 64 << 10;
    /** The largest input side: the releases'. */
    public static final int MAX_IMAGE_SIZE = 1024;
    /** Hiera's stride at its last stage: the input side is a multiple of it. */
    private static final int STRIDE = 32;
    /** A layout's name is for logs: longer ones are cut. */
    private static final int MAX_NAME_CHARS = 64;
    private static final Set<String> FIELDS = Set.of("name", "heads", "global_att_blocks", "window_spec",
            "image_size", "mem_attn_heads");
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private Sam2Layouts() {}

    /** Reads and checks a layout file on its own (step 1). */
    public static Sam2Config.Layout read(Path file) {
        String text;
        try {
            // A handful of small numbers: anything larger is not a layout (and is not read into memory).
            long size = Files.size(file);
            if (size > MAX_BYTES) {
                throw new CheckpointException(file, "is " + size + " bytes, not a SAM 2 layout (at most " + MAX_BYTES + ")");
            }
            text = Files.readString(file);
        } catch (IOException e) {
            throw new CheckpointException(file, "is not a readable JSON layout: " + e.getMessage(), e);
        }
        return parse(file, text);
    }

    /** Step 1 on a layout's text; {@code file} names it in errors. */
    public static Sam2Config.Layout parse(Path file, String text) {
        JsonNode n;
        try {
            n = JSON.readTree(text);
        } catch (IOException e) {
            throw new CheckpointException(file, "is not one JSON value: "
                    + (e instanceof com.fasterxml.jackson.core.JsonProcessingException j ? j.getOriginalMessage()
                            : e.getMessage()), e);
        }
        if (n == null || !n.isObject()) {
            throw new CheckpointException(file, "a SAM 2 layout is a JSON object, got "
                    + (n == null || n.isMissingNode() ? "nothing" : n.getNodeType().name().toLowerCase()));
        }
        for (var it = n.fieldNames(); it.hasNext();) {
            String f = it.next();
            if (!FIELDS.contains(f)) {
                throw new CheckpointException(file, "unknown field \"" + SafeText.of(f, MAX_NAME_CHARS) + "\" (known: "
                        + new TreeSet<>(FIELDS) + ")");
            }
        }
        String name = file.getFileName().toString();
        JsonNode nm = n.get("name");
        if (nm != null) {
            if (!nm.isTextual() || nm.asText().isBlank()) {
                throw new CheckpointException(file, "\"name\" must be a non-empty string, got " + SafeText.of(nm, 80));
            }
            name = nm.asText();
        }
        int imageSize = integer(n, "image_size", file, STRIDE, MAX_IMAGE_SIZE);
        if (imageSize % STRIDE != 0) {
            throw new CheckpointException(file, "\"image_size\" is " + imageSize + ", not a multiple of " + STRIDE
                    + " (Hiera's stride at its last stage)");
        }
        int[] windows = integers(n, "window_spec", file, 1, imageSize / 4);
        if (windows.length != 4) {
            throw new CheckpointException(file, "\"window_spec\" has " + windows.length
                    + " sizes, Hiera's 4 stages need exactly 4");
        }
        int[] global = integers(n, "global_att_blocks", file, 0, 1023);
        // The name is only ever shown: escaped and cut here, once, so no log line it reaches can be forged.
        return new Sam2Config.Layout(SafeText.of(name, MAX_NAME_CHARS), integer(n, "heads", file, 1, 4096), global,
                windows, imageSize, integer(n, "mem_attn_heads", file, 1, 4096));
    }

    /**
     * Step 2: {@code layout} against the checkpoint's shapes (Hiera's width {@code embedDim}, its {@code stages},
     * the {@code hidden} width), before the model allocates anything. A release's own layout passes.
     *
     * @param source the checkpoint (errors name it, and the layout file when there is one)
     */
    public static void check(Sam2Config.Layout layout, int embedDim, int[] stages, int hidden, Path source,
            Path layoutFile) {
        String where = layoutFile != null ? "layout " + layoutFile.getFileName() + ": " : "layout " + layout.name() + ": ";
        int depth = Arrays.stream(stages).sum();
        if (layout.heads() > embedDim || embedDim % layout.heads() != 0) {
            throw new CheckpointException(source, where + "\"heads\" is " + layout.heads() + ", it must divide Hiera's"
                    + " width " + embedDim + " (image_encoder.trunk.patch_embed.proj.weight)");
        }
        Set<Integer> seen = new HashSet<>();
        for (int b : layout.globalAttBlocks()) {
            if (b >= depth) {
                throw new CheckpointException(source, where + "\"global_att_blocks\" has block " + b
                        + ", the trunk's blocks are 0 to " + (depth - 1) + " (stages " + Arrays.toString(stages) + ")");
            }
            if (!seen.add(b)) {
                throw new CheckpointException(source, where + "\"global_att_blocks\" lists block " + b + " twice");
            }
        }
        int[] windows = layout.windowSpec();
        if (windows.length != 4) {
            throw new CheckpointException(source, where + "\"window_spec\" has " + windows.length + " sizes, 4 needed");
        }
        int side = layout.imageSize() / 4;
        if (side % windows[0] != 0) {
            throw new CheckpointException(source, where + "\"window_spec\"[0] is " + windows[0] + ", it must divide the"
                    + " first stage's map of " + side + " (image_size " + layout.imageSize() + " / 4)");
        }
        for (int s = 0; s < 4; s++) {
            int stageSide = side >> s;
            if (windows[s] > stageSide) {
                throw new CheckpointException(source, where + "\"window_spec\"[" + s + "] is " + windows[s]
                        + ", larger than stage " + (s + 1) + "'s map of " + stageSide + " (image_size "
                        + layout.imageSize() + ")");
            }
        }
        int memHeads = layout.memAttnHeads();
        if (memHeads > hidden || hidden % memHeads != 0 || (hidden / memHeads) % 4 != 0) {
            throw new CheckpointException(source, where + "\"mem_attn_heads\" is " + memHeads + ", it must divide the"
                    + " hidden width " + hidden + " (no_mem_embed) into heads of a multiple of 4 channels (RoPE)");
        }
    }

    private static int integer(JsonNode n, String field, Path file, int min, int max) {
        JsonNode v = n.get(field);
        if (v == null || !v.isIntegralNumber()) {
            throw new CheckpointException(file, "\"" + field + "\" must be a whole number from " + min + " to " + max
                    + ", got " + (v == null ? "nothing" : SafeText.of(v, 80)));
        }
        if (!v.canConvertToInt() || v.asInt() < min || v.asInt() > max) {
            throw new CheckpointException(file, "\"" + field + "\" is " + SafeText.of(v, 80) + ", "
                    + (v.canConvertToLong() && v.asLong() < min ? "at least " + min : "at most " + max));
        }
        return v.asInt();
    }

    private static int[] integers(JsonNode n, String field, Path file, int min, int max) {
        JsonNode v = n.get(field);
        if (v == null || !v.isArray()) {
            throw new CheckpointException(file, "\"" + field + "\" must be an array of whole numbers, got "
                    + (v == null ? "nothing" : SafeText.of(v, 80)));
        }
        if (v.size() > 64) {
            throw new CheckpointException(file, "\"" + field + "\" has " + v.size() + " entries, at most 64");
        }
        int[] out = new int[v.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode e = v.get(i);
            if (!e.isIntegralNumber() || !e.canConvertToInt() || e.asInt() < min || e.asInt() > max) {
                throw new CheckpointException(file, "\"" + field + "\"[" + i + "] is " + SafeText.of(e, 80)
                        + ", it must be a whole number from " + min + " to " + max);
            }
            out[i] = e.asInt();
        }
        return out;
    }
}
