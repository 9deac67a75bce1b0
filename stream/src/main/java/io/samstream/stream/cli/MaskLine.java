package io.samstream.stream.cli;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.stream.engine.LogSafe;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * One mask record as one line of text ({@code samstream masks tail}):
 * {@code stream=cam-1 frame=42 pts_ms=1400 engine=e2 size=1280x720 objects=[1 score=0.970 area=15000 box=10,20,110,220; ...] hidden=[3] lost=[7]}.
 * {@code engine} only when the record names one (engines of a cluster do), {@code hidden} and {@code lost}
 * only when not empty. Text from the record is escaped ({@link LogSafe}), so one record is one line.
 */
final class MaskLine {
    private MaskLine() {}

    static String of(MaskRecord r, Optional<String> engine) {
        StringBuilder b = new StringBuilder(96 + 64 * r.objects().size());
        b.append("stream=").append(LogSafe.of(r.stream())).append(" frame=").append(r.frame())
                .append(" pts_ms=").append(r.ptsMs());
        engine.ifPresent(e -> b.append(" engine=").append(LogSafe.of(e)));
        b.append(" size=").append(r.width()).append('x').append(r.height()).append(" objects=[");
        for (int i = 0; i < r.objects().size(); i++) {
            MaskRecord.ObjectMask o = r.objects().get(i);
            MaskRecord.Box box = o.box();
            b.append(i == 0 ? "" : "; ").append(o.id()).append(" score=")
                    .append(String.format(Locale.ROOT, "%.3f", o.score())).append(" area=").append(o.area())
                    .append(" box=").append(box.x0()).append(',').append(box.y0()).append(',').append(box.x1())
                    .append(',').append(box.y1());
        }
        b.append(']');
        ids(b, "hidden", r.hidden());
        ids(b, "lost", r.lost());
        return b.toString();
    }

    private static void ids(StringBuilder b, String name, List<Integer> ids) {
        if (!ids.isEmpty()) {
            b.append(' ').append(name).append('=').append(ids.toString().replace(" ", ""));
        }
    }
}
