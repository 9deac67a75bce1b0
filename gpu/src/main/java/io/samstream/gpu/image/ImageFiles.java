package io.samstream.gpu.image;

import java.awt.color.ColorSpace;
import java.awt.image.BufferedImage;
import java.awt.image.ColorModel;
import java.awt.image.ComponentColorModel;
import java.awt.image.DataBuffer;
import java.awt.image.IndexColorModel;
import java.awt.image.Raster;
import java.awt.image.WritableRaster;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import javax.imageio.IIOException;
import javax.imageio.ImageIO;
import javax.imageio.ImageReader;
import javax.imageio.stream.ImageInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads PNG and JPEG files into {@link RgbImage}s the way {@code np.array(Image.open(f).convert("RGB"))}
 * sees them, and writes RGB PNGs.
 *
 * <p>Samples are read from the raster, never through {@code BufferedImage.getRGB}, which would push gray
 * images through a linear-to-sRGB colour conversion. What each layout becomes:
 * <ul>
 *   <li>gray: R = G = B = the gray value; gray + alpha and RGBA: alpha dropped, not composited (as PIL's
 *       {@code convert("RGB")});</li>
 *   <li>palette (any bit depth): the palette's RGB, its alpha dropped; 1, 2 and 4-bit gray: scaled to
 *       0..255 (0/255, x85, x17), as PIL unpacks them;</li>
 *   <li>16 bits per sample: the high byte. PIL does this for 16-bit RGB, RGBA and gray+alpha PNGs, and
 *       OpenCV's {@code imread} (used by segment-anything's {@code scripts/amg.py}) for all 16-bit PNGs.
 *       For 16-bit <em>gray</em> PIL differs: it opens it as mode {@code I;16} and {@code convert("RGB")}
 *       saturates every value above 255 to 255 (Convert.c {@code I16_RGB}), which turns most real 16-bit
 *       images white; we take the high byte instead.</li>
 * </ul>
 * Embedded colour profiles, gamma chunks and EXIF orientation are ignored, as PIL's {@code Image.open}
 * ignores them. JPEG is decoded by the JDK's libjpeg-based decoder; PIL uses libjpeg-turbo, whose output
 * can differ by a unit in some pixels (chroma upsampling), so JPEG parity is close, not guaranteed.
 */
public final class ImageFiles {
    private static final Logger LOG = LoggerFactory.getLogger(ImageFiles.class);

    /**
     * The default limit on an image's pixels: two 8K UHD frames (2 x 7680 x 4320, about 66 Mpx, 200 MB
     * as RGB). A few kB of PNG can declare 20000 x 20000 pixels (3.1 GB decoded); the header is checked
     * before any pixel is decoded.
     */
    public static final long DEFAULT_MAX_PIXELS = 2L * 7680 * 4320;

    private ImageFiles() {}

    /** {@link #read(Path, long)} with {@link #DEFAULT_MAX_PIXELS}. */
    public static RgbImage read(Path file) {
        return read(file, DEFAULT_MAX_PIXELS);
    }

    /**
     * Decodes a PNG or JPEG file of at most {@code maxPixels} pixels (width x height, read from its header
     * before decoding); any failure is an {@link ImageReadException} naming the file.
     */
    public static RgbImage read(Path file, long maxPixels) {
        if (maxPixels <= 0) {
            throw new IllegalArgumentException("maxPixels must be positive, got " + maxPixels);
        }
        checkIsReadableFile(file);
        String format = "image";
        try (ImageInputStream in = ImageIO.createImageInputStream(file.toFile())) {
            if (in == null) {
                throw new ImageReadException(file, "cannot be opened for reading");
            }
            ImageReader reader = readerFor(file, in);
            format = formatName(reader);
            List<String> warnings = new ArrayList<>();
            try {
                reader.setInput(in, true, true);
                reader.addIIOReadWarningListener((source, warning) -> warnings.add(warning));
                checkPixels(file, format, reader.getWidth(0), reader.getHeight(0), maxPixels);
                BufferedImage image = reader.read(0);
                failIfTruncated(file, format, warnings);
                return toRgb(file, image);
            } finally {
                reader.dispose();
            }
        } catch (ImageReadException e) {
            throw e;
        } catch (IIOException e) {
            throw new ImageReadException(file, "corrupt or unsupported " + format + " data: " + describe(e), e);
        } catch (IOException e) {
            throw new ImageReadException(file, "cannot be read: " + describe(e), e);
        } catch (RuntimeException e) {
            // The JDK decoders signal some malformed inputs with unchecked exceptions.
            throw new ImageReadException(file, "corrupt " + format + " data: " + describe(e), e);
        }
    }

    /** Writes an 8-bit RGB PNG (replacing the file); failures are {@link UncheckedIOException}s naming it. */
    public static void writePng(RgbImage image, Path file) {
        BufferedImage out = new BufferedImage(image.width(), image.height(), BufferedImage.TYPE_3BYTE_BGR);
        WritableRaster raster = out.getRaster();
        int[] row = new int[image.width() * 3];
        byte[] rgb = image.rgb();
        for (int y = 0; y < image.height(); y++) {
            int base = y * row.length;
            for (int i = 0; i < row.length; i++) {
                row[i] = rgb[base + i] & 0xFF;
            }
            raster.setPixels(0, y, image.width(), 1, row); // bands are R, G, B whatever the byte order
        }
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.deleteIfExists(file);
            if (!ImageIO.write(out, "png", file.toFile())) {
                throw new IOException("no PNG writer available");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(file + ": cannot write PNG: " + describe(e), e);
        }
    }

    private static void checkIsReadableFile(Path file) {
        if (Files.isDirectory(file)) {
            throw new ImageReadException(file, "is a directory, not an image file");
        }
        if (!Files.exists(file)) {
            throw new ImageReadException(file, "no such file");
        }
        if (!Files.isReadable(file)) {
            throw new ImageReadException(file, "not readable (permission denied)");
        }
        try {
            if (Files.size(file) == 0) {
                throw new ImageReadException(file, "empty file, not an image");
            }
        } catch (NoSuchFileException e) {
            throw new ImageReadException(file, "no such file", e);
        } catch (AccessDeniedException e) {
            throw new ImageReadException(file, "not readable (permission denied)", e);
        } catch (IOException e) {
            throw new ImageReadException(file, "cannot be read: " + describe(e), e);
        }
    }

    /** Refuses, from the header alone, an image that would decode to more than {@code maxPixels}. */
    private static void checkPixels(Path file, String format, int width, int height, long maxPixels) {
        if (width <= 0 || height <= 0) {
            throw new ImageReadException(file, "corrupt " + format + " header: " + width + "x" + height + " pixels");
        }
        long pixels = (long) width * height;
        if (pixels > maxPixels) {
            throw new ImageReadException(file, String.format(Locale.ROOT, "is %dx%d pixels (WxH, %.1f Mpx), more"
                    + " than the limit of %d pixels (%.1f Mpx); refused before decoding. Scale it down first",
                    width, height, pixels / 1e6, maxPixels, maxPixels / 1e6));
        }
    }

    private static ImageReader readerFor(Path file, ImageInputStream in) throws IOException {
        Iterator<ImageReader> readers = ImageIO.getImageReaders(in);
        if (!readers.hasNext()) {
            throw new ImageReadException(file, "not a PNG or JPEG image (file starts with " + leadingBytes(file) + ")");
        }
        ImageReader reader = readers.next();
        String format = formatName(reader);
        if (!format.equals("PNG") && !format.equals("JPEG")) {
            reader.dispose();
            throw new ImageReadException(file, "unsupported image format " + format + " (PNG and JPEG are supported)");
        }
        return reader;
    }

    private static String formatName(ImageReader reader) throws IOException {
        String name = reader.getFormatName().toUpperCase(Locale.ROOT);
        return name.equals("JPG") ? "JPEG" : name;
    }

    /** PIL refuses truncated files; the JDK decoders only warn and fill the rest with gray. */
    private static void failIfTruncated(Path file, String format, List<String> warnings) {
        for (String warning : warnings) {
            String w = warning.toLowerCase(Locale.ROOT);
            if (w.contains("truncated") || w.contains("premature end")) {
                throw new ImageReadException(file, "truncated " + format + " data: " + warning);
            }
        }
        for (String warning : warnings) {
            LOG.debug("{}: {} decoder warning: {}", file, format, warning);
        }
    }

    private static RgbImage toRgb(Path file, BufferedImage image) {
        Raster raster = image.getRaster();
        ColorModel model = image.getColorModel();
        int width = raster.getWidth();
        int height = raster.getHeight();
        byte[] rgb = new byte[Math.multiplyExact(Math.multiplyExact(width, height), 3)];
        int bands = raster.getNumBands();
        int[] row = new int[width * bands];

        if (model instanceof IndexColorModel palette) {
            for (int y = 0; y < height; y++) {
                raster.getPixels(0, y, width, 1, row);
                int o = y * width * 3;
                for (int x = 0; x < width; x++) {
                    int index = row[x * bands];
                    rgb[o++] = (byte) palette.getRed(index);
                    rgb[o++] = (byte) palette.getGreen(index);
                    rgb[o++] = (byte) palette.getBlue(index);
                }
            }
            return new RgbImage(width, height, rgb);
        }

        if (!(model instanceof ComponentColorModel)) {
            throw new ImageReadException(file, "unsupported pixel layout " + model.getClass().getSimpleName());
        }
        int colourType = model.getColorSpace().getType();
        int colours = model.getNumColorComponents();
        boolean gray = colourType == ColorSpace.TYPE_GRAY && colours == 1;
        boolean colour = colourType == ColorSpace.TYPE_RGB && colours == 3;
        if (!gray && !colour) {
            throw new ImageReadException(file, "unsupported colour space with " + colours
                    + " components (gray, gray+alpha, RGB and RGBA are supported)");
        }
        int dataType = raster.getDataBuffer().getDataType();
        if (dataType != DataBuffer.TYPE_BYTE && dataType != DataBuffer.TYPE_USHORT) {
            throw new ImageReadException(file, "unsupported sample type (8 and 16-bit samples are supported)");
        }
        int bits = raster.getSampleModel().getSampleSize(0);
        for (int y = 0; y < height; y++) {
            raster.getPixels(0, y, width, 1, row);
            int o = y * width * 3;
            for (int x = 0; x < width; x++) {
                int p = x * bands;
                if (gray) {
                    byte v = to8Bits(row[p], bits);
                    rgb[o++] = v;
                    rgb[o++] = v;
                    rgb[o++] = v;
                } else {
                    rgb[o++] = to8Bits(row[p], bits);
                    rgb[o++] = to8Bits(row[p + 1], bits);
                    rgb[o++] = to8Bits(row[p + 2], bits);
                }
            }
        }
        return new RgbImage(width, height, rgb);
    }

    /** 8-bit samples as they are, wider ones by their high byte, narrower ones stretched to 0..255. */
    private static byte to8Bits(int sample, int bits) {
        if (bits == 8) {
            return (byte) sample;
        }
        if (bits > 8) {
            return (byte) (sample >>> (bits - 8));
        }
        return (byte) (sample * 255 / ((1 << bits) - 1));
    }

    private static String leadingBytes(Path file) {
        byte[] head = new byte[8];
        int n;
        try (InputStream in = Files.newInputStream(file)) {
            n = in.readNBytes(head, 0, head.length);
        } catch (IOException e) {
            return "unreadable bytes";
        }
        StringBuilder sb = new StringBuilder("bytes");
        for (int i = 0; i < n; i++) {
            sb.append(String.format(" %02x", head[i] & 0xFF));
        }
        return sb.toString();
    }

    /** An exception's message on one line, falling back to its type, with its cause when that says more. */
    private static String describe(Throwable e) {
        String message = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        Throwable cause = e.getCause();
        if (cause != null && cause.getMessage() != null && !message.contains(cause.getMessage())) {
            message += " (" + cause.getMessage() + ")";
        }
        return message.replace('\n', ' ').replace('\r', ' ');
    }
}
