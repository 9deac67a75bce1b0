package io.samstream.gpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BumpAllocatorTest {
    @Test
    void allocationsAreAlignedAndInOrder() {
        BumpAllocator a = new BumpAllocator(4096);
        assertEquals(0, a.allocate(10, "a"));
        assertEquals(256, a.allocate(256, "b"));
        assertEquals(512, a.allocate(1, "c"));
        assertEquals(768, a.used());
    }

    @Test
    void releaseRollsBackToTheMark() {
        BumpAllocator a = new BumpAllocator(4096);
        a.allocate(300, "weights");
        long mark = a.mark();
        a.allocate(1000, "scratch");
        assertEquals(512 + 1024, a.used());
        a.release(mark);
        assertEquals(512, a.used());
        assertEquals(512, a.allocate(8, "again"));
        assertEquals(512 + 1024, a.peak());
    }

    @Test
    void exhaustionNamesWhatAndHowMuch() {
        BumpAllocator a = new BumpAllocator(1024);
        a.allocate(1000, "weights");
        CudaException e = assertThrows(CudaException.class, () -> a.allocate(100, "activations of block 3"));
        assertTrue(e.getMessage().contains("activations of block 3"), e.getMessage());
        assertTrue(e.getMessage().contains("exhausted"), e.getMessage());
    }

    @Test
    void rejectsForeignMarks() {
        BumpAllocator a = new BumpAllocator(1024);
        a.allocate(10, "x");
        assertThrows(IllegalArgumentException.class, () -> a.release(512));
        assertThrows(IllegalArgumentException.class, () -> a.release(3));
    }
}
