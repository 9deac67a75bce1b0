package io.samstream.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.Device;
import io.samstream.config.PromptSpec;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.gpu.ModelCheckpoints;
import io.samstream.gpu.checkpoint.CheckpointLoader;
import io.samstream.gpu.sam2.Sam2Tracking;
import io.samstream.testkit.TestModels;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The memory-mode benchmark's row on the CPU with the tiny SAM 2.1 fixture: it tracks and counts what it did. */
class MemoryModeBenchTest {
    @Test
    @Timeout(120)
    void aRowOfLiveCamerasInMemoryModeCountsItsFrames() throws Exception {
        try (Sam2Tracking tracking = ModelCheckpoints.openSam2Tracking(CheckpointLoader.load(TestModels.tinySam2()), 2,
                Device.CPU, 0, 2)) {
            MemoryModeBench.Row row = MemoryModeBench.run(tracking, 2, 2, 3, 128, 96, 2);
            assertEquals(2, row.streams());
            assertEquals(2, row.objects());
            assertTrue(row.published() > 0, "frames published: " + row);
            assertTrue(row.seconds() >= 3, "the row ran its time: " + row);
            assertTrue(row.p50Ms() > 0 && row.p99Ms() >= row.p50Ms(), "latency: " + row);
            assertEquals(0, row.deviceAtEnd(), "no device memory on the CPU");
            assertTrue(row.meanBatch() >= 1 && row.meanBatch() <= 2, "batches of 1 or 2 frames: " + row);
            assertTrue(row.modelMsPerFrame() > 0, "the model's calls took time: " + row);
            assertTrue(row.maskMs() > 0, "masks were made on the host pool: " + row);
            assertTrue(row.finishWaitShare() >= 0 && row.finishWaitShare() < 1, "the stage's wait for finishes: " + row);
            String md = row.markdown();
            assertTrue(md.startsWith("| 2 | 2 | " + row.published() + " | " + row.dropped() + " | "), md);
            assertEquals(MemoryModeBench.HEADER.split("\n")[0].split("\\|").length, md.split("\\|").length, md);
        }
    }

    /**
     * The stand-in model: its calls take the time asked a frame, its discs are made into masks by the engine, and a
     * time it cannot sleep is refused, naming the option.
     */
    @Test
    @Timeout(120)
    void aRowWithTheStandInModelMeasuresTheEnginesHostWork() throws Exception {
        try (StandInSam2 standIn = new StandInSam2(5)) {
            MemoryModeBench.Row row = MemoryModeBench.run(standIn, 2, 2, 3, 320, 240, 2);
            assertTrue(row.published() > 0, "frames published: " + row);
            assertTrue(row.modelMsPerFrame() >= 5, "a call sleeps 5 ms a frame: " + row);
            assertTrue(row.maskMs() > 0, "the discs were made into masks: " + row);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new StandInSam2(-1));
        assertTrue(e.getMessage().contains("--stand-in"), e.getMessage());
    }

    @Test
    void objectsAreTheScenesShapesFirstThenGridCells() {
        TestPatternSource scene = new TestPatternSource("c", 640, 480, 30, 1, 3, true);
        int shapes = scene.objectsAt(0).size();
        List<PromptSpec.ObjectPrompt> boxes = MemoryModeBench.boxes(scene, shapes + 2, 640, 480);
        assertEquals(shapes + 2, boxes.size());
        int[] first = scene.objectsAt(0).get(0).box();
        assertArrayEquals(new double[] {Math.max(0, first[0]), Math.max(0, first[1]), Math.min(640, first[2]),
                Math.min(480, first[3])}, boxes.get(0).box());
        assertArrayEquals(new double[] {40, 30, 120, 90}, boxes.get(shapes).box(), "the grid's first cell");
        assertArrayEquals(new double[] {200, 30, 280, 90}, boxes.get(shapes + 1).box(), "the grid's second cell");
        for (int k = 0; k < boxes.size(); k++) {
            assertEquals(k + 1, boxes.get(k).id());
        }
    }
}
