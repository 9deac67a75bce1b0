package io.samstream.gpu.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Files written by NumPy 2.5 itself ({@code tools/fixtures/make_imaging_fixtures.py}). */
class NpyFixturesTest {

    private static Path fixture(String name) {
        try {
            return Path.of(NpyFixturesTest.class.getResource("/fixtures/npy/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void ourWriterProducesTheBytesOfNpSave() throws IOException {
        assertArrayEquals(Files.readAllBytes(fixture("f4_2x3.npy")),
                Npy.toBytes(NpyArray.ofFloat32(new float[] {-2f, -0.5f, 1f, 2.5f, 4f, 5.5f}, 2, 3)));
        assertArrayEquals(Files.readAllBytes(fixture("u1.npy")),
                Npy.toBytes(NpyArray.ofUint8(new byte[] {0, 51, 102, (byte) 153, (byte) 204, (byte) 255}, 2, 3)));
        assertArrayEquals(Files.readAllBytes(fixture("b1.npy")),
                Npy.toBytes(NpyArray.ofBool(new boolean[] {true, false, true, false, false, true}, 2, 3)));
        assertArrayEquals(Files.readAllBytes(fixture("scalar_f4.npy")), Npy.toBytes(NpyArray.ofFloat32(new float[] {3.5f})));
    }

    @Test
    void readsEveryDtypeNumPyWrote() throws IOException {
        NpyArray f4 = Npy.read(fixture("f4_2x3.npy"));
        assertArrayEquals(new int[] {2, 3}, f4.shape());
        assertArrayEquals(new float[] {-2f, -0.5f, 1f, 2.5f, 4f, 5.5f}, f4.toTensor().data());

        float[] f2 = Npy.read(fixture("f2_special.npy")).toFloats();
        assertArrayEquals(new float[] {0f, -0f, 0x1p-24f, 1023 * 0x1p-24f, 0x1p-14f, 1f, -2f, 65504f,
            Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN, 0.333251953125f}, f2);
        assertEquals(Float.floatToRawIntBits(-0f), Float.floatToRawIntBits(f2[1]));

        assertArrayEquals(new float[] {0.1f, -0f, 3.5f}, Npy.read(fixture("f8.npy")).toFloats());
        assertArrayEquals(new long[] {-7, 0, 123456, Integer.MAX_VALUE}, Npy.read(fixture("i4.npy")).toLongs());
        assertArrayEquals(new long[] {-1, 1L << 40, 5}, Npy.read(fixture("i8.npy")).toLongs());
        assertArrayEquals(new boolean[] {true, false, true, false, false, true}, Npy.read(fixture("b1.npy")).toBooleans());

        NpyArray scalar = Npy.read(fixture("scalar_f4.npy"));
        assertEquals(0, scalar.shape().length);
        assertArrayEquals(new float[] {3.5f}, scalar.toFloats());

        NpyArray v2 = Npy.read(fixture("v2_f4.npy"));
        assertEquals(2, Files.readAllBytes(fixture("v2_f4.npy"))[6]);
        assertArrayEquals(new float[] {0f, 1f, 2f, 3f}, v2.toFloats());

        NpyArray be = Npy.read(fixture("be_f4.npy"));
        assertEquals("<f4", be.dtype());
        assertArrayEquals(new float[] {1.5f, -2f}, be.toFloats());
    }

    @Test
    void fortranOrderedFilesAreRefused() {
        Path file = fixture("fortran_f4.npy");
        NpyFormatException e = assertThrows(NpyFormatException.class, () -> Npy.read(file));
        assertTrue(e.getMessage().startsWith(file + ": fortran_order=True is not supported"), e.getMessage());
    }

    @Test
    void readsSavezAndSavezCompressed() throws IOException {
        for (String name : new String[] {"savez.npz", "savez_compressed.npz"}) {
            Map<String, NpyArray> arrays = Npy.readNpz(fixture(name));
            assertEquals(2, arrays.size(), name);
            assertArrayEquals(new float[] {0f, 1f, 2f}, arrays.get("logits").toFloats(), name);
            assertArrayEquals(new int[] {1, 2}, arrays.get("masks").shape(), name);
            assertArrayEquals(new boolean[] {true, false}, arrays.get("masks").toBooleans(), name);
        }
    }
}
