package io.samstream.gpu.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ResizeLongestSideTest {
    private final ResizeLongestSide sam = new ResizeLongestSide(1024);

    @Test
    void preprocessShapeScalesTheLongSideToTheTarget() {
        assertEquals(new ImageSize(576, 1024), sam.preprocessShape(720, 1280));
        assertEquals(new ImageSize(1024, 576), sam.preprocessShape(1280, 720));
        assertEquals(new ImageSize(768, 1024), sam.preprocessShape(480, 640));
        assertEquals(new ImageSize(1024, 1024), sam.preprocessShape(1024, 1024));
        assertEquals(new ImageSize(1024, 1024), sam.preprocessShape(17, 17));
    }

    @Test
    void preprocessShapeRoundsHalfUpByTruncatingPlusHalf() {
        // 200 * (1024 / 300) = 682.67 -> 683; the long side stays exact.
        assertEquals(new ImageSize(683, 1024), sam.preprocessShape(200, 300));
        // 1080 * (1024 / 1920) = 576 exactly.
        assertEquals(new ImageSize(576, 1024), sam.preprocessShape(1080, 1920));
        // 3 * (3 / 6) = 1.5 -> int(2.0) = 2: halves round up.
        assertEquals(new ImageSize(2, 3), ResizeLongestSide.preprocessShape(3, 6, 3));
        // 1 * (2 / 4) = 0.5 -> 1.
        assertEquals(new ImageSize(1, 2), ResizeLongestSide.preprocessShape(1, 4, 2));
        // 427 * (1024 / 640) = 683.2 -> 683.
        assertEquals(new ImageSize(683, 1024), sam.preprocessShape(427, 640));
    }

    @Test
    void aSideThatRoundsToZeroIsRefused() {
        // The reference would ask PIL for a 0-pixel side and fail there; we fail here, with the size in the message.
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sam.preprocessShape(1, 5000));
        assertEquals("a 5000x1 (WxH) image resized so its longest side is 1024 pixels would be 0 pixels high: its"
                + " aspect ratio is beyond the 2048:1 the model input allows", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> sam.preprocessShape(100_000, 1), "0 pixels wide");
        assertEquals(new ImageSize(1, 1024), sam.preprocessShape(1, 2048)); // 0.5 rounds up: the limit
    }

    @Test
    void applyResizesToThePreprocessShape() {
        RgbImage in = PillowBilinearResizeTest.randomImage(30, 20, 3);
        RgbImage out = new ResizeLongestSide(16).apply(in);
        assertEquals(16, out.width());
        assertEquals(11, out.height()); // 20 * 16/30 = 10.67 -> 11
        assertArrayEquals(PillowBilinearResize.resize(in, 16, 11).rgb(), out.rgb());
    }

    @Test
    void applyOnAnImageAlreadyAtTheTargetSizeKeepsIt() {
        RgbImage in = PillowBilinearResizeTest.randomImage(16, 9, 4);
        assertSame(in, new ResizeLongestSide(16).apply(in));
    }

    @Test
    void coordsScaleEachAxisByNewOverOld() {
        ImageSize hd = new ImageSize(720, 1280);
        assertArrayEquals(new double[] {512.0, 288.0, 0.0, 0.0}, sam.applyCoords(new double[] {640, 360, 0, 0}, hd));
        // 300x200 (WxH) -> 1024x683: x * 1024/300, y * 683/200, each ratio a double.
        ImageSize small = new ImageSize(200, 300);
        double[] p = sam.applyCoords(new double[] {150.0, 100.0}, small);
        assertEquals(150.0 * (1024.0 / 300.0), p[0], 0.0);
        assertEquals(100.0 * (683.0 / 200.0), p[1], 0.0);
        assertEquals(341.5, p[1], 0.0);
    }

    @Test
    void boxesScaleAsTwoPoints() {
        ImageSize hd = new ImageSize(720, 1280);
        assertArrayEquals(new double[] {80, 40, 800, 576},
                sam.applyBoxes(new double[] {100, 50, 1000, 720}, hd));
        assertThrows(IllegalArgumentException.class, () -> sam.applyBoxes(new double[] {1, 2, 3}, hd));
        assertThrows(IllegalArgumentException.class, () -> sam.applyCoords(new double[] {1, 2, 3}, hd));
    }
}
