package io.samstream.stream.cli;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.gpu.mask.CocoRle;
import java.awt.image.BufferedImage;
import java.awt.image.DataBufferByte;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.imageio.ImageIO;

/**
 * Writes each object of a mask record as a PNG of the frame's size, {@code DIR/frame-000042-object-1.png}:
 * 8-bit grey, 255 inside the mask and 0 outside, decoded from the record's COCO RLE ({@link CocoRle}).
 */
final class MaskPngs {
    private MaskPngs() {}

    /** The file an object's mask of a frame goes to. */
    static Path file(Path dir, long frame, int object) {
        return dir.resolve(String.format("frame-%06d-object-%d.png", frame, object));
    }

    /** Writes every object of {@code record}; returns how many files. */
    static int write(Path dir, MaskRecord record) {
        int n = 0;
        for (MaskRecord.ObjectMask o : record.objects()) {
            boolean[] mask = CocoRle.decode(o.mask().counts(), o.mask().height(), o.mask().width());
            BufferedImage image = new BufferedImage(o.mask().width(), o.mask().height(), BufferedImage.TYPE_BYTE_GRAY);
            byte[] pixels = ((DataBufferByte) image.getRaster().getDataBuffer()).getData();
            for (int i = 0; i < mask.length; i++) {
                pixels[i] = mask[i] ? (byte) 255 : 0;
            }
            Path file = file(dir, record.frame(), o.id());
            try {
                if (!ImageIO.write(image, "png", file.toFile())) {
                    throw new IllegalStateException("no PNG writer in this Java runtime");
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
            }
            n++;
        }
        return n;
    }

    /** Creates {@code dir} (and its parents) or says why it cannot be. */
    static void prepare(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("--to " + dir + ": cannot create the folder: " + e, e);
        }
        if (!Files.isWritable(dir)) {
            throw new IllegalArgumentException("--to " + dir + ": the folder is not writable");
        }
    }
}
