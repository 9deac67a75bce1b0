package io.samstream.stream.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.sink.MaskOverlay;
import io.samstream.connectors.sink.ObjectMask;
import io.samstream.connectors.video.VideoFrame;
import java.awt.image.BufferedImage;
import java.awt.image.DataBufferByte;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import javax.imageio.IIOImage;
import javax.imageio.ImageIO;
import javax.imageio.ImageWriteParam;
import javax.imageio.ImageWriter;
import javax.imageio.stream.MemoryCacheImageOutputStream;

/**
 * Makes a preview of one frame: the frame downscaled to the preview's width (each pixel the mean of the 2 x 2 source
 * pixels around its centre), the record's masks sampled onto it ({@link MaskSampler}) and drawn as the overlay video
 * draws them ({@link MaskOverlay}: a colour per object id, tinted area, solid outline), JPEG-encoded; and the JSON of
 * the frame's objects. Runs on the previews' own threads, never the pipeline's.
 */
final class PreviewRenderer {
    /** The JPEG quality (0-1): small files, masks still crisp. */
    static final float QUALITY = 0.8f;

    private PreviewRenderer() {}

    /** The preview's size for a frame: {@code width} wide (at most the frame's), the frame's aspect. */
    static int[] size(int frameWidth, int frameHeight, int width) {
        int w = Math.max(1, Math.min(width, frameWidth));
        int h = Math.max(1, (int) Math.round((double) frameHeight * w / frameWidth));
        return new int[] {w, Math.min(h, frameHeight)};
    }

    /**
     * @param rgb the frame's pixels, RGB24 ({@code 3 * record.width() * record.height()} bytes)
     */
    static Preview render(MaskRecord record, byte[] rgb, int width, long madeAt) {
        int[] size = size(record.width(), record.height(), width);
        int w = size[0];
        int h = size[1];
        byte[] small = downscale(rgb, record.width(), record.height(), w, h);
        List<ObjectMask> masks = new ArrayList<>(record.objects().size());
        for (MaskRecord.ObjectMask o : record.objects()) {
            masks.add(new ObjectMask(Integer.toString(o.id()), MaskSampler.sample(o.mask().counts(), record.height(),
                    record.width(), h, w)));
        }
        byte[] drawn = MaskOverlay.draw(new VideoFrame(record.stream(), record.frame(), record.ptsMs(),
                record.capturedAt(), w, h, small), masks);
        return new Preview(record.stream(), record.frame(), w, jpeg(drawn, w, h), objectsJson(record, w, h), madeAt);
    }

    /** The frame's objects: what the WebSocket's text message and the console's list carry. */
    static String objectsJson(MaskRecord r, int previewWidth, int previewHeight) {
        ObjectNode o = Json.object();
        o.put("stream", r.stream()).put("frame", r.frame()).put("pts_ms", r.ptsMs())
                .put("captured_at", r.capturedAt().toString()).put("width", r.width()).put("height", r.height())
                .put("preview_width", previewWidth).put("preview_height", previewHeight);
        ArrayNode objects = o.putArray("objects");
        for (MaskRecord.ObjectMask m : r.objects()) {
            ObjectNode j = objects.addObject();
            j.put("id", m.id()).put("score", m.score()).put("area", m.area()).put("colour", colour(m.id()));
            j.putArray("box").add(m.box().x0()).add(m.box().y0()).add(m.box().x1()).add(m.box().y1());
            if (m.concept() != null) {
                j.put("concept", m.concept()); // the phrase that found it (SAM 3's concept mode)
            }
        }
        ArrayNode hidden = o.putArray("hidden");
        r.hidden().forEach(hidden::add);
        ArrayNode lost = o.putArray("lost");
        r.lost().forEach(lost::add);
        return o.toString();
    }

    /** The colour the overlay draws object {@code id} in, as CSS writes it ({@code #rrggbb}). */
    static String colour(int id) {
        return String.format(java.util.Locale.ROOT, "#%06x", io.samstream.connectors.sink.ObjectPalette.rgbOf(
                Integer.toString(id)));
    }

    /** RGB24 {@code w x h} -> {@code tw x th}, each target pixel the mean of the 2 x 2 pixels around its centre. */
    static byte[] downscale(byte[] rgb, int w, int h, int tw, int th) {
        if (tw == w && th == h) {
            return rgb.clone();
        }
        byte[] out = new byte[3 * tw * th];
        int[] x0 = new int[tw];
        int[] x1 = new int[tw];
        for (int tx = 0; tx < tw; tx++) {
            double sx = (tx + 0.5) * w / tw - 0.5;
            x0[tx] = Math.max(0, Math.min(w - 1, (int) Math.floor(sx)));
            x1[tx] = Math.min(w - 1, x0[tx] + 1);
        }
        for (int ty = 0; ty < th; ty++) {
            double sy = (ty + 0.5) * h / th - 0.5;
            int y0 = Math.max(0, Math.min(h - 1, (int) Math.floor(sy)));
            int y1 = Math.min(h - 1, y0 + 1);
            int r0 = 3 * y0 * w;
            int r1 = 3 * y1 * w;
            int o = 3 * ty * tw;
            for (int tx = 0; tx < tw; tx++) {
                int a = 3 * x0[tx];
                int b = 3 * x1[tx];
                for (int c = 0; c < 3; c++) {
                    int sum = (rgb[r0 + a + c] & 0xFF) + (rgb[r0 + b + c] & 0xFF) + (rgb[r1 + a + c] & 0xFF)
                            + (rgb[r1 + b + c] & 0xFF);
                    out[o++] = (byte) ((sum + 2) >> 2);
                }
            }
        }
        return out;
    }

    /** RGB24 -> JPEG at {@link #QUALITY}. */
    static byte[] jpeg(byte[] rgb, int w, int h) {
        BufferedImage image = new BufferedImage(w, h, BufferedImage.TYPE_3BYTE_BGR);
        byte[] bgr = ((DataBufferByte) image.getRaster().getDataBuffer()).getData();
        for (int i = 0; i < bgr.length; i += 3) {
            bgr[i] = rgb[i + 2];
            bgr[i + 1] = rgb[i + 1];
            bgr[i + 2] = rgb[i];
        }
        Iterator<ImageWriter> writers = ImageIO.getImageWritersByFormatName("jpeg");
        if (!writers.hasNext()) {
            throw new IllegalStateException("this JVM has no JPEG encoder (javax.imageio)");
        }
        ImageWriter writer = writers.next();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(w * h / 4);
        try (MemoryCacheImageOutputStream out = new MemoryCacheImageOutputStream(bytes)) {
            writer.setOutput(out);
            ImageWriteParam p = writer.getDefaultWriteParam();
            p.setCompressionMode(ImageWriteParam.MODE_EXPLICIT);
            p.setCompressionQuality(QUALITY);
            writer.write(null, new IIOImage(image, null, null), p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            writer.dispose();
        }
        return bytes.toByteArray();
    }
}
