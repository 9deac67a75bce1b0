package io.samstream.connectors.sink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Instant;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.samstream.connectors.video.VideoFrame;

class MaskOverlayTest {
    @Test
    void colourIsStablePerIdAndDistinctForNeighbours() {
        assertEquals(ObjectPalette.rgbOf("car-1"), ObjectPalette.rgbOf("car-1"));
        Set<Integer> colours = new HashSet<>();
        for (int id = 0; id < ObjectPalette.size(); id++) {
            colours.add(ObjectPalette.rgbOf(Integer.toString(id)));
        }
        assertEquals(ObjectPalette.size(), colours.size(), "ids 0..19 share a colour");
        assertNotEquals(ObjectPalette.rgbOf("car-1"), ObjectPalette.rgbOf("car-2"));
    }

    @Test
    void fillsTheInsideOutlinesTheEdgeLeavesTheRest() {
        int w = 6;
        int h = 5;
        byte[] rgb = new byte[3 * w * h];
        Arrays.fill(rgb, (byte) 100);
        VideoFrame frame = new VideoFrame("s", 0, 0, Instant.EPOCH, w, h, rgb);
        boolean[] mask = new boolean[w * h];
        for (int y = 1; y <= 3; y++) {
            for (int x = 1; x <= 3; x++) {
                mask[y * w + x] = true; // a 3x3 block: 8 edge pixels around one inside pixel (2,2)
            }
        }
        byte[] drawn = MaskOverlay.draw(frame, List.of(new ObjectMask("42", mask)));
        int colour = ObjectPalette.rgbOf("42");
        int[] solid = {colour >>> 16 & 0xFF, colour >>> 8 & 0xFF, colour & 0xFF};
        assertArrayEquals(solid, pixel(drawn, w, 1, 1));
        assertArrayEquals(solid, pixel(drawn, w, 3, 2));
        int[] inside = pixel(drawn, w, 2, 2);
        for (int c = 0; c < 3; c++) {
            assertEquals(100 + (solid[c] - 100) * MaskOverlay.FILL_OPACITY, inside[c], 1.0);
        }
        assertArrayEquals(new int[] {100, 100, 100}, pixel(drawn, w, 0, 0));
        assertArrayEquals(new int[] {100, 100, 100}, pixel(drawn, w, 5, 4));
        assertArrayEquals(rgb, frame.rgb(), "the frame itself is not drawn on");
    }

    @Test
    void maskOfTheWrongSizeIsRefused() {
        VideoFrame frame = new VideoFrame("cam", 0, 0, Instant.EPOCH, 4, 4, new byte[48]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MaskOverlay.draw(frame, List.of(new ObjectMask("1", new boolean[15]))));
        assertEquals("cam: mask of object 1 has 15 pixels, the 4x4 frame 16", e.getMessage());
    }

    private static int[] pixel(byte[] rgb, int width, int x, int y) {
        int at = 3 * (y * width + x);
        return new int[] {rgb[at] & 0xFF, rgb[at + 1] & 0xFF, rgb[at + 2] & 0xFF};
    }
}
