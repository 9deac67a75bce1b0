package io.samstream.connectors.record;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * The JSON form of a {@link MaskRecord}, field for field as design.md gives it. Written with Jackson's
 * streaming generator (the layout is fixed: boxes and sizes are arrays, not objects); read through a
 * tree so that every missing or mistyped field is reported by its path. Fields a reader does not know
 * are ignored, so that a later schema can add some.
 */
public final class MaskRecordJson {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonFactory FACTORY = MAPPER.getFactory();

    private MaskRecordJson() {}

    /** UTF-8 JSON of the record. */
    public static byte[] write(MaskRecord record) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256 + 128 * record.objects().size());
        try (JsonGenerator g = FACTORY.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeStringField("stream", record.stream());
            g.writeNumberField("frame", record.frame());
            g.writeNumberField("pts_ms", record.ptsMs());
            // Instant.toString is ISO-8601 in UTC ("...Z"), with as many fraction digits as needed.
            g.writeStringField("captured_at", record.capturedAt().toString());
            g.writeNumberField("width", record.width());
            g.writeNumberField("height", record.height());
            g.writeStringField("model", record.model());
            g.writeArrayFieldStart("objects");
            for (MaskRecord.ObjectMask o : record.objects()) {
                writeObject(g, o);
            }
            g.writeEndArray();
            // Optional: only frames with coasting or lost objects carry them.
            writeIds(g, "hidden", record.hidden());
            writeIds(g, "lost", record.lost());
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write mask record of stream " + record.stream(), e);
        }
        return out.toByteArray();
    }

    private static void writeIds(JsonGenerator g, String name, List<Integer> ids) throws IOException {
        if (ids.isEmpty()) {
            return;
        }
        g.writeArrayFieldStart(name);
        for (int id : ids) {
            g.writeNumber(id);
        }
        g.writeEndArray();
    }

    private static void writeObject(JsonGenerator g, MaskRecord.ObjectMask o) throws IOException {
        g.writeStartObject();
        g.writeNumberField("id", o.id());
        g.writeNumberField("score", o.score());
        g.writeNumberField("stability", o.stability());
        MaskRecord.Box b = o.box();
        g.writeFieldName("box");
        g.writeArray(new int[] {b.x0(), b.y0(), b.x1(), b.y1()}, 0, 4);
        g.writeNumberField("area", o.area());
        g.writeObjectFieldStart("mask");
        g.writeFieldName("size");
        g.writeArray(new int[] {o.mask().height(), o.mask().width()}, 0, 2);
        g.writeStringField("counts", o.mask().counts());
        g.writeEndObject();
        // Optional: only objects a concept found (SAM 3) carry it.
        if (o.concept() != null) {
            g.writeStringField("concept", o.concept());
        }
        g.writeEndObject();
    }

    /**
     * Parses a record written by {@link #write}.
     *
     * @throws IllegalArgumentException when the bytes are not such a record; the message names the
     *                                  field at fault (e.g. {@code objects[2].mask.counts})
     */
    public static MaskRecord read(byte[] json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (IOException e) {
            String why = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
            throw new IllegalArgumentException("mask record is not JSON: " + why, e);
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("mask record must be a JSON object");
        }
        JsonNode objectsNode = field(root, "objects", "");
        if (!objectsNode.isArray()) {
            throw new IllegalArgumentException("mask record field 'objects' must be an array");
        }
        List<MaskRecord.ObjectMask> objects = new ArrayList<>(objectsNode.size());
        for (int i = 0; i < objectsNode.size(); i++) {
            objects.add(readObject(objectsNode.get(i), "objects[" + i + "]."));
        }
        List<Integer> hidden = ids(root, "hidden");
        List<Integer> lost = ids(root, "lost");
        String capturedAt = text(root, "captured_at", "");
        Instant captured;
        try {
            captured = Instant.parse(capturedAt);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("mask record field 'captured_at' is not an ISO-8601 instant: "
                    + capturedAt, e);
        }
        try {
            return new MaskRecord(text(root, "stream", ""), integer(root, "frame", ""), integer(root, "pts_ms", ""),
                    captured, toInt(root, "width", ""), toInt(root, "height", ""), text(root, "model", ""), objects,
                    hidden, lost);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("invalid mask record: " + e.getMessage(), e);
        }
    }

    /** An optional list of ids ({@code hidden}, {@code lost}): absent (or null) means none. */
    private static List<Integer> ids(JsonNode root, String name) {
        JsonNode node = root.get(name);
        if (node == null || node.isNull()) {
            return List.of();
        }
        if (!node.isArray()) {
            throw wrongType(name, "an array of object ids", node);
        }
        List<Integer> ids = new ArrayList<>(node.size());
        for (JsonNode v : node) {
            if (!v.isIntegralNumber() || !v.canConvertToInt()) {
                throw wrongType(name, "an array of object ids", node);
            }
            ids.add(v.intValue());
        }
        return ids;
    }

    private static MaskRecord.ObjectMask readObject(JsonNode node, String path) {
        if (node == null || !node.isObject()) {
            throw new IllegalArgumentException("mask record field '" + path.substring(0, path.length() - 1)
                    + "' must be an object");
        }
        int[] box = ints(node, "box", path, 4);
        JsonNode mask = field(node, "mask", path);
        int[] size = ints(mask, "size", path + "mask.", 2);
        try {
            return new MaskRecord.ObjectMask(toInt(node, "id", path), (float) number(node, "score", path),
                    (float) number(node, "stability", path), new MaskRecord.Box(box[0], box[1], box[2], box[3]),
                    integer(node, "area", path), new MaskRecord.Rle(size[0], size[1], text(mask, "counts", path + "mask.")),
                    node.hasNonNull("concept") ? text(node, "concept", path) : null);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException("invalid mask record field '" + path.substring(0, path.length() - 1)
                    + "': " + e.getMessage(), e);
        }
    }

    private static JsonNode field(JsonNode parent, String name, String path) {
        JsonNode node = parent.get(name);
        if (node == null || node.isNull()) {
            throw new IllegalArgumentException("mask record has no field '" + path + name + "'");
        }
        return node;
    }

    private static String text(JsonNode parent, String name, String path) {
        JsonNode node = field(parent, name, path);
        if (!node.isTextual()) {
            throw wrongType(path + name, "a string", node);
        }
        return node.textValue();
    }

    private static double number(JsonNode parent, String name, String path) {
        JsonNode node = field(parent, name, path);
        if (!node.isNumber()) {
            throw wrongType(path + name, "a number", node);
        }
        return node.doubleValue();
    }

    private static long integer(JsonNode parent, String name, String path) {
        JsonNode node = field(parent, name, path);
        if (!node.isIntegralNumber() || !node.canConvertToLong()) {
            throw wrongType(path + name, "an integer", node);
        }
        return node.longValue();
    }

    private static int toInt(JsonNode parent, String name, String path) {
        JsonNode node = field(parent, name, path);
        if (!node.isIntegralNumber() || !node.canConvertToInt()) {
            throw wrongType(path + name, "a 32-bit integer", node);
        }
        return node.intValue();
    }

    private static int[] ints(JsonNode parent, String name, String path, int count) {
        JsonNode node = field(parent, name, path);
        if (!node.isArray() || node.size() != count) {
            throw wrongType(path + name, "an array of " + count + " integers", node);
        }
        int[] values = new int[count];
        for (int i = 0; i < count; i++) {
            JsonNode v = node.get(i);
            if (!v.isIntegralNumber() || !v.canConvertToInt()) {
                throw wrongType(path + name, "an array of " + count + " integers", node);
            }
            values[i] = v.intValue();
        }
        return values;
    }

    private static IllegalArgumentException wrongType(String path, String expected, JsonNode got) {
        return new IllegalArgumentException("mask record field '" + path + "' must be " + expected + ", got " + got);
    }
}
