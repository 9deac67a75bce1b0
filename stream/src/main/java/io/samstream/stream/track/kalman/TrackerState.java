package io.samstream.stream.track.kalman;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.TrackingState;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * What an {@link ObjectTracker} knows after a frame, so that another engine takes its tracks up under
 * the same ids: the tracks (ids, origin, prompt revision, filter state, last low-res logits, appearance
 * memory), the lost tracks still probed for re-identification (ghosts, with the frame each was lost on),
 * the prompted ids that ended, the prompt generation and the discovered-id counter. As JSON, the logits
 * fixed-point (1/256) 16-bit, deflated, base64: a mask's sign survives exactly up to |logit| < 128; the
 * appearance vectors as float32, base64 (they are compared against thresholds). A state written before
 * appearance memory and ghosts were kept reads as tracks without memory and no ghosts; one written before
 * covered frames were counted, with none counted.
 *
 * @param frame the frame it was taken after
 */
public record TrackerState(long frame, long generation, long framesTracked, int discovered,
        List<TrackState> tracks, Map<Integer, Long> ended, List<GhostState> ghosts) implements TrackingState {
    /** The field of a stream's state record that holds it. */
    public static final String KEY = "tracker";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final float SCALE = 256f;

    public TrackerState {
        tracks = List.copyOf(tracks);
        ended = Map.copyOf(ended);
        ghosts = List.copyOf(ghosts);
    }

    /**
     * One track's state; see {@link Track}. {@code seedLook} and {@code look} are null for a track with no
     * appearance memory yet.
     */
    public record TrackState(int id, Track.Origin origin, long revision, long bornFrame, Tensor lowResLogits,
            double[] box, double[] clearSize, int badFrames, int unexplainedBadFrames, int coveredBadFrames, double[] filter,
            float[] seedLook, float[] look, long area, long clearArea) {}

    /** A lost track probed for re-identification until {@code lostFrame} + the re-id window. */
    public record GhostState(TrackState track, long lostFrame) {}

    @Override
    public String key() {
        return KEY;
    }

    /** The ids of its tracks, in order. */
    @Override
    public List<Integer> ids() {
        return tracks.stream().map(TrackState::id).toList();
    }

    @Override
    public ObjectNode toJson() {
        ObjectNode o = JSON.createObjectNode();
        o.put("frame", frame).put("generation", generation).put("frames_tracked", framesTracked)
                .put("discovered", discovered);
        ArrayNode ts = o.putArray("tracks");
        for (TrackState t : tracks) {
            track(ts.addObject(), t);
        }
        ArrayNode gs = o.putArray("ghosts");
        for (GhostState g : ghosts) {
            track(gs.addObject(), g.track()).put("lost_frame", g.lostFrame());
        }
        ObjectNode e = o.putObject("ended");
        ended.forEach((id, rev) -> e.put(Integer.toString(id), rev));
        return o;
    }

    private static ObjectNode track(ObjectNode n, TrackState t) {
        n.put("id", t.id()).put("origin", t.origin().name()).put("revision", t.revision())
                .put("born", t.bornFrame()).put("bad", t.badFrames()).put("unexplained", t.unexplainedBadFrames())
                .put("covered", t.coveredBadFrames());
        array(n.putArray("box"), t.box());
        array(n.putArray("clear_size"), t.clearSize());
        array(n.putArray("filter"), t.filter());
        ArrayNode shape = n.putArray("logits_shape");
        for (int d : t.lowResLogits().shape()) {
            shape.add(d);
        }
        n.put("logits", compress(t.lowResLogits().data()));
        if (t.seedLook() != null) {
            n.put("seed_look", floats(t.seedLook())).put("look", floats(t.look()));
        }
        n.put("area", t.area()).put("clear_area", t.clearArea());
        return n;
    }

    /** @throws IllegalArgumentException naming what is wrong, for a state this version cannot read */
    public static TrackerState fromJson(JsonNode o) {
        try {
            List<TrackState> tracks = new ArrayList<>();
            for (JsonNode n : o.required("tracks")) {
                tracks.add(track(n));
            }
            List<GhostState> ghosts = new ArrayList<>();
            for (JsonNode n : o.path("ghosts")) {
                ghosts.add(new GhostState(track(n), n.required("lost_frame").asLong()));
            }
            Map<Integer, Long> ended = new LinkedHashMap<>();
            o.required("ended").fields().forEachRemaining(e -> ended.put(Integer.parseInt(e.getKey()), e.getValue().asLong()));
            return new TrackerState(o.required("frame").asLong(), o.required("generation").asLong(),
                    o.required("frames_tracked").asLong(), o.required("discovered").asInt(), tracks, ended, ghosts);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("unreadable tracker state: " + e.getMessage(), e);
        }
    }

    private static TrackState track(JsonNode n) {
        JsonNode sh = n.required("logits_shape");
        int[] shape = new int[sh.size()];
        for (int i = 0; i < shape.length; i++) {
            shape[i] = sh.get(i).asInt();
        }
        float[] logits = decompress(n.required("logits").asText(), (int) Tensor.numel(shape));
        float[] seedLook = n.has("seed_look") ? floats(n.required("seed_look").asText()) : null;
        float[] look = n.has("seed_look") ? floats(n.required("look").asText()) : null;
        if (seedLook != null && seedLook.length != look.length) {
            throw new IllegalArgumentException("track " + n.path("id").asInt() + ": appearance vectors of "
                    + seedLook.length + " and " + look.length + " values");
        }
        return new TrackState(n.required("id").asInt(), Track.Origin.valueOf(n.required("origin").asText()),
                n.required("revision").asLong(), n.required("born").asLong(), new Tensor(logits, shape),
                doubles(n.required("box")), doubles(n.required("clear_size")), n.required("bad").asInt(),
                n.required("unexplained").asInt(), n.path("covered").asInt(0), doubles(n.required("filter")), seedLook, look,
                n.path("area").asLong(0), n.path("clear_area").asLong(0));
    }

    /** float32, little-endian, base64: exact. */
    static String floats(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : v) {
            b.putFloat(f);
        }
        return Base64.getEncoder().encodeToString(b.array());
    }

    static float[] floats(String text) {
        byte[] raw = Base64.getDecoder().decode(text);
        if (raw.length % 4 != 0) {
            throw new IllegalArgumentException("an appearance vector of " + raw.length + " bytes, not float32s");
        }
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        float[] v = new float[raw.length / 4];
        for (int i = 0; i < v.length; i++) {
            v[i] = b.getFloat();
        }
        return v;
    }

    private static void array(ArrayNode a, double[] v) {
        for (double d : v) {
            a.add(d);
        }
    }

    private static double[] doubles(JsonNode a) {
        double[] v = new double[a.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = a.get(i).asDouble();
        }
        return v;
    }

    static String compress(float[] values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 2).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            b.putShort((short) Math.max(Short.MIN_VALUE, Math.min(Short.MAX_VALUE, Math.round(v * SCALE))));
        }
        Deflater d = new Deflater(Deflater.BEST_SPEED);
        d.setInput(b.array());
        d.finish();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] chunk = new byte[64 << 10];
        while (!d.finished()) {
            out.write(chunk, 0, d.deflate(chunk));
        }
        d.end();
        return Base64.getEncoder().encodeToString(out.toByteArray());
    }

    static float[] decompress(String text, int count) {
        Inflater inf = new Inflater();
        inf.setInput(Base64.getDecoder().decode(text));
        byte[] raw = new byte[count * 2];
        try {
            int n = 0;
            while (n < raw.length && !inf.finished()) {
                int got = inf.inflate(raw, n, raw.length - n);
                if (got == 0 && (inf.needsInput() || inf.needsDictionary())) {
                    break;
                }
                n += got;
            }
            if (n != raw.length) {
                throw new IllegalArgumentException("logits: " + n / 2 + " values, expected " + count);
            }
        } catch (DataFormatException e) {
            throw new IllegalArgumentException("logits: " + e.getMessage(), e);
        } finally {
            inf.end();
        }
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        float[] v = new float[count];
        for (int i = 0; i < count; i++) {
            v[i] = b.getShort() / SCALE;
        }
        return v;
    }
}
