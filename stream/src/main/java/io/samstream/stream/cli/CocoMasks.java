package io.samstream.stream.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.connectors.record.MaskRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Collection;

/**
 * One stream's mask records as one COCO-style JSON document, what {@code pycocotools.coco.COCO} loads:
 * {@code images} (one per frame: id = frame index, width, height, pts_ms), {@code annotations} (one per object
 * and frame: {@code segmentation} = the record's RLE as it is, {@code area}, {@code bbox} = [x, y, w, h],
 * {@code score}, {@code track_id} = the object's id, category 1) and one category, {@code object}.
 */
final class CocoMasks {
    private static final ObjectMapper JSON = new ObjectMapper();

    private CocoMasks() {}

    static ObjectNode document(String stream, String topic, Collection<MaskRecord> frames) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode info = root.putObject("info");
        info.put("description", "samstream masks of stream " + stream + " from topic " + topic);
        info.put("date_created", Instant.now().toString());
        ArrayNode images = root.putArray("images");
        ArrayNode annotations = root.putArray("annotations");
        long annotation = 0;
        for (MaskRecord r : frames) {
            ObjectNode image = images.addObject();
            image.put("id", r.frame());
            image.put("file_name", String.format("frame-%06d.png", r.frame()));
            image.put("width", r.width());
            image.put("height", r.height());
            image.put("frame_index", r.frame());
            image.put("pts_ms", r.ptsMs());
            for (MaskRecord.ObjectMask o : r.objects()) {
                ObjectNode a = annotations.addObject();
                a.put("id", ++annotation);
                a.put("image_id", r.frame());
                a.put("category_id", 1);
                a.put("track_id", o.id());
                ObjectNode segmentation = a.putObject("segmentation");
                segmentation.putArray("size").add(o.mask().height()).add(o.mask().width());
                segmentation.put("counts", o.mask().counts());
                a.put("area", o.area());
                MaskRecord.Box b = o.box();
                a.putArray("bbox").add(b.x0()).add(b.y0()).add(b.x1() - b.x0()).add(b.y1() - b.y0());
                a.put("iscrowd", 0);
                a.put("score", o.score());
            }
        }
        root.putArray("categories").addObject().put("id", 1).put("name", "object");
        return root;
    }

    static void write(Path file, ObjectNode document) {
        try {
            JSON.writeValue(file.toFile(), document);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }
}
