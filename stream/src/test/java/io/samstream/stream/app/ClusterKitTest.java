package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.samstream.connectors.record.MaskRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The overlap measure of the cluster tests ({@link ClusterKit#handovers}) on made-up records. */
class ClusterKitTest {
    /** Records of stream {@code s} by {@code engine}, one every 500 ms from {@code fromS} to {@code toS} seconds. */
    private static void publish(List<MaskTap.Seen> out, String engine, double fromS, double toS) {
        for (double t = fromS; t <= toS; t += 0.5) {
            out.add(new MaskTap.Seen(new MaskRecord("s", out.size(), 0, Instant.EPOCH, 4, 4, "m", List.of()),
                    (long) (t * 1e9), engine));
        }
        out.sort((a, b) -> Long.compare(a.atNanos(), b.atNanos()));
    }

    @Test
    void twoEnginesPublishingAtOnceOverlap() {
        List<MaskTap.Seen> seen = new ArrayList<>();
        publish(seen, "a", 0, 10);
        publish(seen, "b", 8, 20);
        List<ClusterKit.Handover> h = ClusterKit.handovers(seen, 6);
        assertEquals(1, h.size());
        assertEquals("a", h.get(0).from());
        assertEquals("b", h.get(0).to());
        assertEquals(2000, h.get(0).overlapMs());
    }

    @Test
    void aStreamBackOnAnEngineItLeftIsAHandoverWithAGapNotAnOverlap() {
        List<MaskTap.Seen> seen = new ArrayList<>();
        publish(seen, "a", 0, 10);
        publish(seen, "b", 12, 20);
        publish(seen, "a", 27, 40);
        List<ClusterKit.Handover> h = ClusterKit.handovers(seen, 6);
        assertEquals(List.of("a b -2000", "b a -7000"),
                h.stream().map(x -> x.from() + " " + x.to() + " " + x.overlapMs()).toList());
        assertEquals(Map.of("s", 0L), ClusterKit.maxOverlapByStream(h));
    }

    @Test
    void anOldOwnerPublishingAgainAfterAPauseOverlapsStill() {
        List<MaskTap.Seen> seen = new ArrayList<>();
        publish(seen, "a", 0, 10);
        publish(seen, "b", 11, 30);
        publish(seen, "a", 18, 21); // out of the group after a long pause, it publishes until it notices
        List<ClusterKit.Handover> h = ClusterKit.handovers(seen, 6);
        assertEquals(Map.of("s", 3000L), ClusterKit.maxOverlapByStream(h));
    }
}
