package io.samstream.connectors.record;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The masks of one frame of one stream: the value of a record on the masks topic (key = {@link #stream}) and a
 * line of the file sinks' {@code masks.jsonl}; what the tracker's frames become. On the wire it is UTF-8 JSON
 * (see {@link MaskRecordJson}):
 *
 * <pre>{@code
 * {"stream":"cam-1","frame":42,"pts_ms":1400,"captured_at":"2026-01-02T03:04:05.678Z",
 *  "width":1280,"height":720,"model":"sam_vit_b",
 *  "objects":[{"id":1,"score":0.97,"stability":0.95,"box":[10,20,110,220],"area":15000,
 *              "mask":{"size":[720,1280],"counts":"<COCO RLE>"}}],
 *  "lost":[7]}
 * }</pre>

 * {@code lost} is written only when the list is not empty.
 *
 * @param stream     the stream's id, also the record key (so one stream's frames stay in order)
 * @param frame      the frame's index in its stream, from 0
 * @param ptsMs      the frame's presentation time in the stream, milliseconds
 * @param capturedAt when the frame was captured (live sources) or read (files); written in UTC
 * @param width      the frame's width in pixels
 * @param height     the frame's height in pixels
 * @param model      which model made the masks (e.g. {@code sam_vit_b})
 * @param objects    the tracked objects found in the frame (never an empty mask); empty when none
 * @param hidden     ids of tracked objects with no mask in this frame that are still followed (coasting: behind
 *                   another object or not found for a few frames, not yet lost); empty when none
 * @param lost       ids of tracked objects lost in this frame (each reported once, in the frame its track
 *                   ended); empty when none
 */
public record MaskRecord(String stream, long frame, long ptsMs, Instant capturedAt, int width, int height,
                         String model, List<ObjectMask> objects, List<Integer> hidden, List<Integer> lost) {

    /** The record header that carries the schema version of the value. */
    public static final String SCHEMA_HEADER = "samstream.schema";
    /** The schema version this code writes: 2 added {@code hidden}. */
    public static final String SCHEMA_VERSION = "2";
    /**
     * The record header that names the engine which published the record ({@code samstream.cluster.instance-id}
     * or the host name), written by engines of a cluster; absent otherwise.
     */
    public static final String ENGINE_HEADER = "samstream.engine";
    /** The schema versions this code reads (a version 1 record is one without {@code hidden}). */
    public static final Set<String> READABLE_VERSIONS = Set.of("1", "2");

    public MaskRecord {
        requireText(stream, "stream");
        Objects.requireNonNull(capturedAt, "capturedAt");
        requireText(model, "model");
        if (frame < 0) {
            throw new IllegalArgumentException("frame must be >= 0, got " + frame);
        }
        if (width < 1 || height < 1) {
            throw new IllegalArgumentException("frame size must be positive, got " + width + "x" + height);
        }
        objects = List.copyOf(Objects.requireNonNull(objects, "objects"));
        hidden = List.copyOf(Objects.requireNonNull(hidden, "hidden"));
        lost = List.copyOf(Objects.requireNonNull(lost, "lost"));
        for (ObjectMask o : objects) {
            // Masks are at the frame's own resolution, so that a consumer can overlay them as they are.
            if (o.mask().height() != height || o.mask().width() != width) {
                throw new IllegalArgumentException("object " + o.id() + ": mask size [" + o.mask().height() + ","
                        + o.mask().width() + "] differs from the frame's [" + height + "," + width + "]");
            }
        }
    }

    /** A record with no hidden objects. */
    public MaskRecord(String stream, long frame, long ptsMs, Instant capturedAt, int width, int height, String model,
            List<ObjectMask> objects, List<Integer> lost) {
        this(stream, frame, ptsMs, capturedAt, width, height, model, objects, List.of(), lost);
    }

    /** A record with no hidden or lost objects. */
    public MaskRecord(String stream, long frame, long ptsMs, Instant capturedAt, int width, int height, String model,
            List<ObjectMask> objects) {
        this(stream, frame, ptsMs, capturedAt, width, height, model, objects, List.of(), List.of());
    }

    /**
     * One object in a frame.
     *
     * @param id        the tracked object's id, stable from frame to frame (the prompts topic's {@code object})
     * @param score     the model's predicted IoU of the mask
     * @param stability the mask's stability score (IoU of the mask thresholded a little above and below 0)
     * @param box       the mask's bounding box in pixels
     * @param area      the mask's pixel count
     * @param mask      the mask itself
     * @param concept   the concept (noun phrase) that found the object, SAM 3's concept tracking; null for objects
     *                  of prompts or discovery (the JSON field is then absent, so older readers see nothing new)
     */
    public record ObjectMask(int id, float score, float stability, Box box, long area, Rle mask, String concept) {
        /** The longest concept a record carries (the configuration's bound is lower). */
        public static final int MAX_CONCEPT_CHARS = 1000;

        public ObjectMask {
            Objects.requireNonNull(box, "box");
            if (concept != null && (concept.isEmpty() || concept.length() > MAX_CONCEPT_CHARS)) {
                throw new IllegalArgumentException("object " + id + ": a concept is 1 to " + MAX_CONCEPT_CHARS
                        + " characters, got " + concept.length());
            }
            Objects.requireNonNull(mask, "mask");
            // JSON has no NaN or infinity.
            if (!Float.isFinite(score) || !Float.isFinite(stability)) {
                throw new IllegalArgumentException("object " + id + ": score and stability must be finite, got "
                        + score + " and " + stability);
            }
            if (area < 0) {
                throw new IllegalArgumentException("area must be >= 0, got " + area);
            }
        }

        /** An object no concept found (prompted or discovered). */
        public ObjectMask(int id, float score, float stability, Box box, long area, Rle mask) {
            this(id, score, stability, box, area, mask, null);
        }
    }

    /** A bounding box {@code [x0, y0, x1, y1]}, in pixels, x1 and y1 exclusive (all 0 for an empty mask). */
    public record Box(int x0, int y0, int x1, int y1) {
        public Box {
            if (x1 < x0 || y1 < y0) {
                throw new IllegalArgumentException("box [" + x0 + "," + y0 + "," + x1 + "," + y1
                        + "] has x1 < x0 or y1 < y0");
            }
        }
    }

    /**
     * A binary mask as COCO compressed RLE, what {@code pycocotools.mask.decode} reads:
     * {@code {"size":[h,w],"counts":"..."}}, runs in column-major order.
     *
     * @param counts the compressed RLE string, made by the encoder of the gpu module
     */
    public record Rle(int height, int width, String counts) {
        public Rle {
            Objects.requireNonNull(counts, "counts");
            if (height < 1 || width < 1) {
                throw new IllegalArgumentException("mask size must be positive, got [" + height + "," + width + "]");
            }
        }
    }

    private static void requireText(String value, String name) {
        Objects.requireNonNull(value, name);
        if (value.isBlank()) {
            throw new IllegalArgumentException(name + " must not be blank");
        }
    }
}
