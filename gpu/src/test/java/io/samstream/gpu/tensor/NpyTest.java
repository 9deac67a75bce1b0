package io.samstream.gpu.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NpyTest {
    @TempDir
    Path dir;

    private static NpyArray parse(byte[] bytes) throws IOException {
        return Npy.read(new ByteArrayInputStream(bytes), "test.npy");
    }

    /** A .npy file with the given version, header dict (padded as NumPy does) and data. */
    private static byte[] npy(int major, String dict, byte[] data) {
        int prefix = major == 1 ? 10 : 12;
        int pad = 64 - (prefix + dict.length() + 1) % 64;
        byte[] text = (dict + " ".repeat(pad) + "\n").getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer b = ByteBuffer.allocate(prefix + text.length + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', (byte) major, 0});
        if (major == 1) {
            b.putShort((short) text.length);
        } else {
            b.putInt(text.length);
        }
        return b.put(text).put(data).array();
    }

    private static byte[] le(int bytesPerItem, long... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * bytesPerItem).order(ByteOrder.LITTLE_ENDIAN);
        for (long v : values) {
            switch (bytesPerItem) {
                case 2 -> b.putShort((short) v);
                case 4 -> b.putInt((int) v);
                default -> b.putLong(v);
            }
        }
        return b.array();
    }

    @Test
    void headerIsByteForByteWhatNpSaveWrites() {
        // np.save of np.zeros((2, 3), np.float32): 'v' (118) header bytes, data at offset 128.
        byte[] header = Npy.header(NpyArray.ofFloat32(new float[6], 2, 3));
        String dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        assertEquals(128, header.length);
        assertEquals(118, header[8]);
        assertEquals(0, header[9]);
        String text = new String(header, 10, 118, StandardCharsets.ISO_8859_1);
        assertTrue(text.startsWith(dict + " "));
        assertEquals(dict + " ".repeat(117 - dict.length()) + "\n", text);
        // One dimension keeps its trailing comma; no dimension is '()' and gets no growth padding.
        String oneD = new String(Npy.header(NpyArray.ofUint8(new byte[5], 5)), StandardCharsets.ISO_8859_1);
        assertTrue(oneD.contains("'descr': '|u1', 'fortran_order': False, 'shape': (5,), }"));
        byte[] scalar = Npy.header(NpyArray.ofFloat32(new float[1]));
        assertEquals(128, scalar.length); // 10 + 56 + 1 bytes round up to 128
        assertTrue(new String(scalar, StandardCharsets.ISO_8859_1).contains("'shape': (), }"));
    }

    @Test
    void float32RoundTripsThroughAFile() throws IOException {
        float[] values = {0f, -1.5f, 3.25f, Float.MAX_VALUE, Float.MIN_VALUE, Float.NaN, Float.NEGATIVE_INFINITY, 7f};
        Tensor t = new Tensor(values, 2, 2, 2);
        Path file = dir.resolve("t.npy");
        Npy.write(file, t);
        assertEquals(128 + 32, Files.size(file)); // 128-byte header, 8 floats
        NpyArray back = Npy.read(file);
        assertEquals("<f4", back.dtype());
        assertArrayEquals(new int[] {2, 2, 2}, back.shape());
        Tensor u = back.toTensor();
        assertArrayEquals(t.shape(), u.shape());
        for (int i = 0; i < values.length; i++) {
            assertEquals(Float.floatToRawIntBits(values[i]), Float.floatToRawIntBits(u.data()[i]));
        }
    }

    @Test
    void uint8AndBoolRoundTrip() throws IOException {
        byte[] bytes = {0, 1, (byte) 200, (byte) 255, 7, 9};
        NpyArray u8 = parse(Npy.toBytes(NpyArray.ofUint8(bytes, 3, 2)));
        assertEquals("|u1", u8.dtype());
        assertArrayEquals(bytes, u8.raw());
        assertArrayEquals(new float[] {0, 1, 200, 255, 7, 9}, u8.toFloats());
        assertArrayEquals(new long[] {0, 1, 200, 255, 7, 9}, u8.toLongs());

        boolean[] mask = {true, false, false, true, true};
        NpyArray b1 = parse(Npy.toBytes(NpyArray.ofBool(mask, 5)));
        assertEquals("|b1", b1.dtype());
        assertArrayEquals(mask, b1.toBooleans());
        assertArrayEquals(new float[] {1, 0, 0, 1, 1}, b1.toFloats());
    }

    @Test
    void readsVersion2HeadersAndOtherDtypes() throws IOException {
        NpyArray i8 = parse(npy(2, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
                le(8, -1, 1L << 40, 5)));
        assertArrayEquals(new long[] {-1, 1L << 40, 5}, i8.toLongs());
        assertArrayEquals(new boolean[] {true, true, true}, i8.toBooleans());

        NpyArray i4 = parse(npy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1), }", le(4, -7, 123456)));
        assertArrayEquals(new int[] {2, 1}, i4.shape());
        assertArrayEquals(new float[] {-7f, 123456f}, i4.toFloats());

        NpyArray f8 = parse(npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                le(8, Double.doubleToLongBits(0.1), Double.doubleToLongBits(1e-300))));
        assertArrayEquals(new float[] {0.1f, 0f}, f8.toFloats());
        assertArrayEquals(new boolean[] {true, true}, f8.toBooleans()); // 1e-300 is not zero
    }

    @Test
    void halfFloatsDecodeExactlyIncludingSubnormalsInfinitiesAndNaN() throws IOException {
        long[] halves = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0xC000, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x3555};
        NpyArray f2 = parse(npy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (12,), }", le(2, halves)));
        float[] f = f2.toFloats();
        assertEquals(Float.floatToRawIntBits(0f), Float.floatToRawIntBits(f[0]));
        assertEquals(Float.floatToRawIntBits(-0f), Float.floatToRawIntBits(f[1]));
        assertEquals(0x1p-24f, f[2], 0f); // smallest subnormal, 5.96e-8
        assertEquals(1023 * 0x1p-24f, f[3], 0f); // largest subnormal, 6.0976e-5
        assertEquals(0x1p-14f, f[4], 0f); // smallest normal
        assertEquals(1f, f[5], 0f);
        assertEquals(-2f, f[6], 0f);
        assertEquals(65504f, f[7], 0f);
        assertEquals(Float.POSITIVE_INFINITY, f[8], 0f);
        assertEquals(Float.NEGATIVE_INFINITY, f[9], 0f);
        assertTrue(Float.isNaN(f[10]));
        assertEquals(0.333251953125f, f[11], 0f); // 0x3555, the half nearest 1/3
    }

    @Test
    void bigEndianDataIsConvertedAndOldHeadersParse() throws IOException {
        ByteBuffer be = ByteBuffer.allocate(8).order(ByteOrder.BIG_ENDIAN).putFloat(1.5f).putFloat(-2f);
        // Python 2 era header: double quotes, 'L' suffixes, no trailing comma.
        NpyArray a = parse(npy(1, "{\"descr\": \">f4\", \"fortran_order\": False, \"shape\": (2L,)}", be.array()));
        assertEquals("<f4", a.dtype());
        assertArrayEquals(new float[] {1.5f, -2f}, a.toFloats());
    }

    @Test
    void fortranOrderIsRefusedWithAClearMessage() {
        byte[] f = npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", new byte[16]);
        IOException e = assertThrows(NpyFormatException.class, () -> parse(f));
        assertTrue(e.getMessage().startsWith("test.npy: fortran_order=True is not supported"), e.getMessage());
    }

    @Test
    void malformedFilesAreRefusedWithTheSourceAndTheProblem() {
        assertMessage("not a .npy file", "PK\3\4 not numpy".getBytes(StandardCharsets.ISO_8859_1));
        assertMessage("unsupported dtype '<c8'",
                npy(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", new byte[8]));
        assertMessage("structured dtypes are not supported",
                npy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", new byte[4]));
        assertMessage("truncated data: expected 24 bytes, found 8",
                npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", new byte[8]));
        assertMessage("unsupported .npy format version 9.0",
                new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 9, 0, 0, 0});
        assertMessage("lacks one of",
                npy(1, "{'descr': '<f4', 'shape': (2, 3), }", new byte[24]));
        // A shape whose size overflows a long product (found by fuzzing: it wrapped to a negative size).
        assertMessage("needs more than 2 GiB, too large to load",
                npy(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (1, 777, 777, 77, 7777, 777777, 77777), }",
                        new byte[8]));
        // The header is quoted with its newline and control characters escaped (found by fuzzing).
        assertMessage("unexpected key 'fortra\\u0093_order'",
                npy(1, "{'descr': '|u1', 'fortra\u0093_order': False, 'shape': (2, 3), }", new byte[6]));
    }

    private static void assertMessage(String expected, byte[] file) {
        IOException e = assertThrows(NpyFormatException.class, () -> parse(file));
        assertTrue(e.getMessage().startsWith("test.npy: "), e.getMessage());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertTrue(e.getMessage().chars().noneMatch(Character::isISOControl), e.getMessage());
    }

    @Test
    void npzArchivesStoredOrDeflatedAreRead() throws IOException {
        byte[] a = Npy.toBytes(NpyArray.ofFloat32(new float[] {1f, 2f, 3f}, 3));
        byte[] b = Npy.toBytes(NpyArray.ofBool(new boolean[] {true, false}, 1, 2));
        Path file = dir.resolve("fixtures.npz");
        try (ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(file))) {
            putStored(zip, "logits.npy", a); // np.savez
            zip.putNextEntry(new ZipEntry("masks.npy")); // np.savez_compressed
            zip.write(b);
            zip.closeEntry();
            zip.putNextEntry(new ZipEntry("README.txt"));
            zip.write("not an array".getBytes(StandardCharsets.UTF_8));
            zip.closeEntry();
        }
        Map<String, NpyArray> arrays = Npy.readNpz(file);
        assertEquals(2, arrays.size());
        assertArrayEquals(new float[] {1f, 2f, 3f}, arrays.get("logits").toFloats());
        assertArrayEquals(new int[] {1, 2}, arrays.get("masks").shape());
        assertArrayEquals(new boolean[] {true, false}, arrays.get("masks").toBooleans());
    }

    @Test
    void aFileThatIsNotAZipIsNamedInTheError() throws IOException {
        Path file = dir.resolve("broken.npz");
        Files.write(file, new byte[] {1, 2, 3, 4, 5});
        IOException e = assertThrows(IOException.class, () -> Npy.readNpz(file));
        assertTrue(e.getMessage().contains("broken.npz"), e.getMessage());
    }

    @Test
    void aLargeHeaderSwitchesToVersion2() throws IOException {
        // 22000 dimensions of 1 ("1, " each) make a header of more than 64 KiB.
        int[] shape = new int[22000];
        java.util.Arrays.fill(shape, 1);
        shape[0] = 2;
        byte[] bytes = Npy.toBytes(NpyArray.ofFloat32(new float[] {4f, 5f}, shape));
        assertEquals(2, bytes[6]);
        NpyArray back = parse(bytes);
        assertArrayEquals(shape, back.shape());
        assertArrayEquals(new float[] {4f, 5f}, back.toFloats());
    }

    private static void putStored(ZipOutputStream zip, String name, byte[] data) throws IOException {
        ZipEntry e = new ZipEntry(name);
        e.setMethod(ZipEntry.STORED);
        e.setSize(data.length);
        e.setCompressedSize(data.length);
        CRC32 crc = new CRC32();
        crc.update(data);
        e.setCrc(crc.getValue());
        zip.putNextEntry(e);
        zip.write(data);
        zip.closeEntry();
    }
}
