package io.samstream.stream.track.kalman;

import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.track.Discovery;
import io.samstream.stream.track.FrameGeometry;
import io.samstream.stream.track.MaskReadout;
import io.samstream.stream.track.ObjectDiscovery;
import java.util.ArrayList;
import java.util.List;

/**
 * New objects on key frames (every {@code interval} frames from the first): the masks the discovery proposes that no
 * object of the frame covers by more than {@code new-object-max-overlap} (nor an earlier new one), post-processed;
 * the tracker makes each a discovered track.
 */
final class NewObjects {
    /** A new object: its post-processed mask (with its id) and the logits its track starts from. */
    record Found(MaskReadout.Readout read, Tensor lowResLogits) {}

    private final Discovery discovery;
    private final MaskReadout readout;

    NewObjects(Discovery discovery, MaskReadout readout) {
        this.discovery = discovery;
        this.readout = readout;
    }

    /** Whether the frame after {@code framesTracked} tracked ones is a key frame. */
    boolean keyFrame(long framesTracked) {
        return framesTracked % discovery.interval() == 0;
    }

    /**
     * The frame's new objects, in the discovery's order, with ids {@code firstId}, {@code firstId + 1}, ...
     *
     * @param kept the frame's live objects (jumped masks aside: those are another object's)
     */
    List<Found> find(ImageEmbedding embedding, FrameGeometry geometry, List<Work> kept, int firstId) {
        List<boolean[]> taken = new ArrayList<>();
        boolean[] covered = new boolean[geometry.width() * geometry.height()];
        for (Work w : kept) {
            taken.add(w.mask);
            boolean[] m = w.read.summary().toRowMajor();
            for (int i = 0; i < m.length; i++) {
                covered[i] |= m[i];
            }
        }
        List<Found> out = new ArrayList<>();
        for (ObjectDiscovery.Found f : discovery.finder().discover(embedding, geometry.width(), geometry.height(),
                covered)) {
            boolean[] m = LowResMask.binary(f.lowResLogits());
            boolean novel = LowResMask.area(m) > 0;
            for (int i = 0; i < taken.size() && novel; i++) {
                novel = LowResMask.coveredBy(m, taken.get(i)) <= discovery.newObjectMaxOverlap();
            }
            if (!novel) {
                continue;
            }
            MaskReadout.Readout r = readout.read(firstId + out.size(), f.lowResLogits(), f.predictedIou(), geometry);
            if (r.empty()) {
                continue;
            }
            out.add(new Found(r, f.lowResLogits()));
            taken.add(m);
        }
        return out;
    }
}
