package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Ctrl-C during {@code run}: the shutdown hook and run's own close may race; everything closes once. */
@Timeout(30)
class SamstreamRuntimeCloseTest {
    @Test
    void concurrentClosesCloseEachResourceOnce() throws Exception {
        AtomicInteger closes = new AtomicInteger();
        AutoCloseable slow = () -> {
            closes.incrementAndGet();
            Thread.sleep(300);
        };
        SamstreamRuntime rt = SamstreamRuntime.ofResources(List.of(slow));
        CountDownLatch go = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            try {
                go.await();
            } catch (InterruptedException e) {
                return;
            }
            rt.close();
        });
        hook.start();
        go.countDown();
        rt.close();
        hook.join();
        rt.close();
        assertEquals(1, closes.get());
    }
}
