package io.samstream.gpu.predict;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.testkit.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PointGridTest {
    /** {@code build_point_grid(n)} as NumPy computed it (tools/fixtures/make_point_grid_fixture.py). */
    private static Map<Integer, List<double[]>> reference() throws IOException {
        Map<Integer, List<double[]>> grids = new LinkedHashMap<>();
        for (String line : Files.readAllLines(Fixtures.gpuFixture("amg/point_grids.txt"))) {
            if (line.startsWith("#")) {
                continue;
            }
            String[] f = line.split(" ");
            List<double[]> grid = grids.computeIfAbsent(Integer.parseInt(f[0]), n -> new ArrayList<>());
            assertEquals(grid.size(), Integer.parseInt(f[1]), "fixture rows in order");
            grid.add(new double[] {Double.parseDouble(f[2]), Double.parseDouble(f[3])});
        }
        return grids;
    }

    @Test
    void equalsNumpysBuildPointGridBitForBit() throws IOException {
        Map<Integer, List<double[]>> reference = reference();
        assertTrue(reference.keySet().containsAll(List.of(1, 3, 7, 32)), "fixture covers the sizes");
        for (Map.Entry<Integer, List<double[]>> e : reference.entrySet()) {
            double[][] grid = PointGrid.normalized(e.getKey());
            assertEquals(e.getValue().size(), grid.length, "n = " + e.getKey());
            for (int i = 0; i < grid.length; i++) {
                // Bit equality: numpy's linspace is start + i * step with the last value set to the stop.
                assertEquals(e.getValue().get(i)[0], grid[i][0], 0.0, "x of point " + i + ", n = " + e.getKey());
                assertEquals(e.getValue().get(i)[1], grid[i][1], 0.0, "y of point " + i + ", n = " + e.getKey());
            }
        }
    }

    @Test
    void scalesToTheImageXByWidthYByHeight() throws IOException {
        List<double[]> ref = reference().get(7);
        double[][] grid = PointGrid.forImage(7, 320, 240);
        for (int i = 0; i < grid.length; i++) {
            assertEquals(ref.get(i)[0] * 320, grid[i][0], 0.0);
            assertEquals(ref.get(i)[1] * 240, grid[i][1], 0.0);
        }
        // Cell centres: the first point is half a cell in, x varies fastest.
        assertEquals(320 / 14.0, grid[0][0], 1e-12);
        assertEquals(240 / 14.0, grid[0][1], 1e-12);
        assertEquals(grid[0][1], grid[6][1], 0.0);
        assertTrue(grid[7][1] > grid[6][1]);
    }

    @Test
    void rejectsAnEmptyGridOrImage() {
        assertEquals("points per side must be at least 1, got 0",
                assertThrows(IllegalArgumentException.class, () -> PointGrid.normalized(0)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> PointGrid.forImage(4, 0, 10));
    }
}
