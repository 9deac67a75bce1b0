package io.samstream.gpu.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.Transparency;
import java.awt.color.ColorSpace;
import java.awt.image.BufferedImage;
import java.awt.image.ComponentColorModel;
import java.awt.image.DataBuffer;
import java.awt.image.IndexColorModel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.zip.CRC32;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImageFilesTest {
    @TempDir
    Path dir;

    private Path write(BufferedImage image, String format, String name) throws IOException {
        Path file = dir.resolve(name);
        assertTrue(ImageIO.write(image, format, file.toFile()), "no " + format + " writer for this layout");
        return file;
    }

    private static int[] pixel(RgbImage image, int x, int y) {
        return new int[] {image.get(x, y, 0), image.get(x, y, 1), image.get(x, y, 2)};
    }

    private static BufferedImage component(int colourSpace, boolean alpha, int dataType, int width, int height) {
        ComponentColorModel model = new ComponentColorModel(ColorSpace.getInstance(colourSpace), alpha, false,
                alpha ? Transparency.TRANSLUCENT : Transparency.OPAQUE, dataType);
        return new BufferedImage(model, model.createCompatibleWritableRaster(width, height), false, null);
    }

    @Test
    void grayIsReadAsStoredNotThroughAColourConversion() throws IOException {
        BufferedImage gray = new BufferedImage(3, 2, BufferedImage.TYPE_BYTE_GRAY);
        int[] values = {0, 1, 50, 128, 200, 255};
        gray.getRaster().setPixels(0, 0, 3, 2, values);
        RgbImage image = ImageFiles.read(write(gray, "png", "gray.png"));
        assertEquals(3, image.width());
        assertEquals(2, image.height());
        for (int i = 0; i < values.length; i++) {
            int v = values[i];
            // getRGB would turn 50 into 124 or so (linear gray to sRGB).
            assertArrayEquals(new int[] {v, v, v}, pixel(image, i % 3, i / 3));
        }
    }

    @Test
    void rgbaDropsAlphaWithoutCompositing() throws IOException {
        BufferedImage rgba = new BufferedImage(2, 1, BufferedImage.TYPE_4BYTE_ABGR);
        rgba.getRaster().setPixel(0, 0, new int[] {10, 20, 30, 0}); // fully transparent: colour kept
        rgba.getRaster().setPixel(1, 0, new int[] {200, 100, 50, 128});
        RgbImage image = ImageFiles.read(write(rgba, "png", "rgba.png"));
        assertArrayEquals(new int[] {10, 20, 30}, pixel(image, 0, 0));
        assertArrayEquals(new int[] {200, 100, 50}, pixel(image, 1, 0));
    }

    @Test
    void grayAlphaDropsAlpha() throws IOException {
        BufferedImage ga = component(ColorSpace.CS_GRAY, true, DataBuffer.TYPE_BYTE, 2, 1);
        ga.getRaster().setPixel(0, 0, new int[] {77, 0});
        ga.getRaster().setPixel(1, 0, new int[] {180, 255});
        RgbImage image = ImageFiles.read(write(ga, "png", "ga.png"));
        assertArrayEquals(new int[] {77, 77, 77}, pixel(image, 0, 0));
        assertArrayEquals(new int[] {180, 180, 180}, pixel(image, 1, 0));
    }

    @Test
    void paletteEntriesAreLookedUp() throws IOException {
        byte[] r = {(byte) 255, 0, 0, 12};
        byte[] g = {0, (byte) 255, 0, 34};
        byte[] b = {0, 0, (byte) 255, 56};
        byte[] a = {(byte) 255, (byte) 255, 0, (byte) 255}; // entry 2 transparent: its colour still counts
        IndexColorModel palette = new IndexColorModel(8, 4, r, g, b, a);
        BufferedImage indexed = new BufferedImage(4, 1, BufferedImage.TYPE_BYTE_INDEXED, palette);
        indexed.getRaster().setPixels(0, 0, 4, 1, new int[] {3, 2, 1, 0});
        RgbImage image = ImageFiles.read(write(indexed, "png", "palette.png"));
        assertArrayEquals(new int[] {12, 34, 56}, pixel(image, 0, 0));
        assertArrayEquals(new int[] {0, 0, 255}, pixel(image, 1, 0));
        assertArrayEquals(new int[] {0, 255, 0}, pixel(image, 2, 0));
        assertArrayEquals(new int[] {255, 0, 0}, pixel(image, 3, 0));
    }

    @Test
    void lowBitDepthGrayIsStretchedToFullRange() throws IOException {
        // A 2-bit gray ramp palette is written as a 2-bit gray PNG; PIL reads it as 0, 85, 170, 255.
        byte[] ramp = {0, 85, (byte) 170, (byte) 255};
        IndexColorModel twoBit = new IndexColorModel(2, 4, ramp, ramp, ramp);
        BufferedImage packed = new BufferedImage(4, 1, BufferedImage.TYPE_BYTE_BINARY, twoBit);
        packed.getRaster().setPixels(0, 0, 4, 1, new int[] {0, 1, 2, 3});
        RgbImage image = ImageFiles.read(write(packed, "png", "gray2.png"));
        for (int x = 0; x < 4; x++) {
            int v = ramp[x] & 0xFF;
            assertArrayEquals(new int[] {v, v, v}, pixel(image, x, 0));
        }
        BufferedImage bilevel = new BufferedImage(2, 1, BufferedImage.TYPE_BYTE_BINARY);
        bilevel.getRaster().setPixels(0, 0, 2, 1, new int[] {1, 0});
        RgbImage bits = ImageFiles.read(write(bilevel, "png", "gray1.png"));
        assertArrayEquals(new int[] {255, 255, 255}, pixel(bits, 0, 0));
        assertArrayEquals(new int[] {0, 0, 0}, pixel(bits, 1, 0));
    }

    @Test
    void sixteenBitSamplesKeepTheirHighByte() throws IOException {
        BufferedImage gray16 = new BufferedImage(3, 1, BufferedImage.TYPE_USHORT_GRAY);
        gray16.getRaster().setPixels(0, 0, 3, 1, new int[] {0x1234, 0xFFFF, 0x00FF});
        RgbImage gray = ImageFiles.read(write(gray16, "png", "gray16.png"));
        assertArrayEquals(new int[] {0x12, 0x12, 0x12}, pixel(gray, 0, 0));
        assertArrayEquals(new int[] {0xFF, 0xFF, 0xFF}, pixel(gray, 1, 0));
        assertArrayEquals(new int[] {0, 0, 0}, pixel(gray, 2, 0));

        BufferedImage rgb16 = component(ColorSpace.CS_sRGB, false, DataBuffer.TYPE_USHORT, 1, 1);
        rgb16.getRaster().setPixel(0, 0, new int[] {0xABCD, 0x0100, 0x80FF});
        assertArrayEquals(new int[] {0xAB, 0x01, 0x80}, pixel(ImageFiles.read(write(rgb16, "png", "rgb16.png")), 0, 0));

        BufferedImage rgba16 = component(ColorSpace.CS_sRGB, true, DataBuffer.TYPE_USHORT, 1, 1);
        rgba16.getRaster().setPixel(0, 0, new int[] {0x1111, 0x2222, 0x3333, 0});
        assertArrayEquals(new int[] {0x11, 0x22, 0x33}, pixel(ImageFiles.read(write(rgba16, "png", "rgba16.png")), 0, 0));
    }

    @Test
    void jpegColourAndGrayDecodeCloseToTheSource() throws IOException {
        BufferedImage rgb = new BufferedImage(32, 16, BufferedImage.TYPE_3BYTE_BGR);
        for (int y = 0; y < 16; y++) {
            for (int x = 0; x < 32; x++) {
                rgb.getRaster().setPixel(x, y, new int[] {x * 8, y * 16, 100});
            }
        }
        RgbImage image = ImageFiles.read(write(rgb, "jpeg", "rgb.jpg"));
        assertEquals(32, image.width());
        assertEquals(16, image.height());
        int[] p = pixel(image, 16, 8);
        assertTrue(Math.abs(p[0] - 128) < 12 && Math.abs(p[1] - 128) < 12 && Math.abs(p[2] - 100) < 12,
                Arrays.toString(p));

        BufferedImage gray = new BufferedImage(16, 16, BufferedImage.TYPE_BYTE_GRAY);
        int[] flat = new int[256];
        Arrays.fill(flat, 90);
        gray.getRaster().setPixels(0, 0, 16, 16, flat);
        RgbImage g = ImageFiles.read(write(gray, "jpeg", "gray.jpg"));
        int[] q = pixel(g, 5, 5);
        assertEquals(q[0], q[1]);
        assertEquals(q[0], q[2]);
        assertTrue(Math.abs(q[0] - 90) <= 2, Arrays.toString(q));
    }

    @Test
    void writePngRoundTripsExactly() {
        RgbImage image = PillowBilinearResizeTest.randomImage(13, 7, 11);
        Path file = dir.resolve("sub/dir/out.png");
        ImageFiles.writePng(image, file);
        RgbImage back = ImageFiles.read(file);
        assertEquals(13, back.width());
        assertArrayEquals(image.rgb(), back.rgb());
        ImageFiles.writePng(PillowBilinearResizeTest.randomImage(2, 2, 1), file); // replaces
        assertEquals(2, ImageFiles.read(file).width());
    }

    @Test
    void missingFilesAndDirectoriesAreNamed() {
        assertProblem(dir.resolve("nope.png"), "no such file");
        assertProblem(dir, "is a directory");
    }

    @Test
    void emptyGarbageAndForeignFilesAreNamed() throws IOException {
        Path empty = Files.write(dir.resolve("empty.png"), new byte[0]);
        assertProblem(empty, "empty file");
        Path text = Files.writeString(dir.resolve("notes.png"), "just some text, not pixels");
        assertProblem(text, "not a PNG or JPEG image (file starts with bytes 6a 75 73 74");
        BufferedImage small = new BufferedImage(2, 2, BufferedImage.TYPE_BYTE_INDEXED);
        assertProblem(write(small, "gif", "anim.gif"), "unsupported image format GIF");
    }

    @Test
    void truncatedFilesAreCorruptNotHalfGray() throws IOException {
        RgbImage noise = PillowBilinearResizeTest.randomImage(64, 64, 5);
        Path png = dir.resolve("whole.png");
        ImageFiles.writePng(noise, png);
        byte[] bytes = Files.readAllBytes(png);
        Path cut = Files.write(dir.resolve("cut.png"), Arrays.copyOf(bytes, bytes.length / 2));
        assertProblem(cut, "PNG");

        BufferedImage rgb = new BufferedImage(64, 64, BufferedImage.TYPE_3BYTE_BGR);
        rgb.getRaster().setDataElements(0, 0, 64, 64, noise.rgb());
        byte[] jpeg = Files.readAllBytes(write(rgb, "jpeg", "whole.jpg"));
        Path cutJpeg = Files.write(dir.resolve("cut.jpg"), Arrays.copyOf(jpeg, jpeg.length / 2));
        assertProblem(cutJpeg, "truncated JPEG");
    }

    private static void assertProblem(Path file, String problem) {
        ImageReadException e = assertThrows(ImageReadException.class, () -> ImageFiles.read(file));
        assertTrue(e.getMessage().startsWith(file + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(problem), e.getMessage());
        assertTrue(!e.getMessage().contains("\n"), e.getMessage());
    }

    // ---- image size limit: checked on the header, before a pixel is decoded ----------------------------

    /** A real small PNG or JPEG whose header is then made to declare width x height. */
    private Path declaring(String format, int width, int height) throws IOException {
        BufferedImage small = new BufferedImage(8, 8, BufferedImage.TYPE_3BYTE_BGR);
        byte[] bytes = Files.readAllBytes(write(small, format, "small." + format));
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (format.equals("png")) {
            b.putInt(16, width).putInt(20, height); // IHDR data after signature(8), length(4), type(4)
            CRC32 crc = new CRC32();
            crc.update(bytes, 12, 17); // type and data
            b.putInt(29, (int) crc.getValue());
        } else {
            int sof = 2;
            while ((bytes[sof + 1] & 0xFF) != 0xC0) { // walk the marker segments to SOF0
                sof += 2 + (b.getShort(sof + 2) & 0xFFFF);
            }
            b.putShort(sof + 5, (short) height).putShort(sof + 7, (short) width);
        }
        return Files.write(dir.resolve("huge." + format), bytes);
    }

    @Test
    void decompressionBombsAreRefusedFromTheirHeader() throws IOException {
        // Before: a 1.17 MB PNG of 20000 x 20000 decoded to 3.1 GB in 31 s.
        Path png = declaring("png", 20_000, 20_000);
        Path jpeg = declaring("jpeg", 65_000, 65_000);
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            assertProblem(png, "is 20000x20000 pixels (WxH, 400.0 Mpx), more than the limit of 66355200 pixels"
                    + " (66.4 Mpx); refused before decoding");
            assertProblem(jpeg, "is 65000x65000 pixels");
        });
    }

    @Test
    void thePixelLimitIsTheCallersToChoose() throws IOException {
        BufferedImage rgb = new BufferedImage(20, 10, BufferedImage.TYPE_3BYTE_BGR);
        Path file = write(rgb, "png", "200px.png");
        assertEquals(20, ImageFiles.read(file, 200).width());
        ImageReadException e = assertThrows(ImageReadException.class, () -> ImageFiles.read(file, 199));
        assertTrue(e.getMessage().contains("is 20x10 pixels (WxH, 0.0 Mpx), more than the limit of 199"),
                e.getMessage());
        assertEquals(2L * 7680 * 4320, ImageFiles.DEFAULT_MAX_PIXELS);
    }

    @Test
    void extremeAspectRatiosAreReadTheResizeSaysWhy() throws IOException {
        // 100000 x 1 is only 0.1 Mpx: it is read; the resize to the model input refuses it with the reason.
        BufferedImage line = new BufferedImage(100_000, 1, BufferedImage.TYPE_BYTE_GRAY);
        RgbImage image = ImageFiles.read(write(line, "png", "line.png"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ResizeLongestSide(1024).apply(image));
        assertTrue(e.getMessage().contains("100000x1 (WxH) image resized so its longest side is 1024 pixels would"
                + " be 0 pixels high"), e.getMessage());
    }
}
