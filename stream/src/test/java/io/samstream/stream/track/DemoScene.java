package io.samstream.stream.track;

import io.samstream.config.Device;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.connectors.video.TestPatternSource.PatternObject;
import io.samstream.connectors.video.VideoFrame;
import io.samstream.gpu.SamModels;
import io.samstream.gpu.mask.CocoRle;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.tensor.Tensor;
import io.samstream.stream.engine.Segmenter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A test-pattern clip with its ground truth, encoded by the bundled demo model (which was trained on such
 * scenes), for tracking tests: frames, embeddings, and each shape's true mask (its own colour's pixels:
 * shapes are solid, so occlusion is accounted for).
 */
public final class DemoScene {
    public static final Path MODEL = Path.of("..", "examples", "sam-demo-synthetic.pth");
    private static SamBackend backend;

    public final TestPatternSource source;
    public final List<VideoFrame> frames = new ArrayList<>();
    public final List<Tensor> embeddings;

    public static synchronized SamBackend backend() {
        if (backend == null) {
            if (!Files.isRegularFile(MODEL)) {
                throw new IllegalStateException("the bundled demo model is missing: " + MODEL.toAbsolutePath());
            }
            backend = SamModels.open(MODEL, Device.CPU, Math.max(1, Runtime.getRuntime().availableProcessors()));
        }
        return backend;
    }

    public DemoScene(String stream, int width, int height, long seed, int count) {
        source = new TestPatternSource(stream, width, height, 12, count, seed, false);
        try {
            for (int i = 0; i < count; i++) {
                frames.add(source.next());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        embeddings = new Segmenter(backend(), "demo").encode(frames);
    }

    /** Shape {@code k}'s true mask in frame {@code index}, row-major. */
    public boolean[] truth(int k, long index) {
        return truth(source, frames.get((int) index), k);
    }

    /** Shape {@code k}'s true mask in {@code f} (made by {@code source}): its own colour's pixels in its box. */
    public static boolean[] truth(TestPatternSource source, VideoFrame f, int k) {
        PatternObject o = source.objectsAt(f.index()).get(k);
        byte[] rgb = f.rgb();
        boolean[] m = new boolean[f.width() * f.height()];
        int x0 = Math.max(0, o.box()[0]);
        int y0 = Math.max(0, o.box()[1]);
        int x1 = Math.min(f.width(), o.box()[2] + 1);
        int y1 = Math.min(f.height(), o.box()[3] + 1);
        for (int y = y0; y < y1; y++) {
            for (int x = x0; x < x1; x++) {
                int at = 3 * (y * f.width() + x);
                int c = ((rgb[at] & 0xff) << 16) | ((rgb[at + 1] & 0xff) << 8) | (rgb[at + 2] & 0xff);
                m[y * f.width() + x] = c == o.rgb();
            }
        }
        return m;
    }

    public static boolean[] decode(io.samstream.connectors.record.MaskRecord.ObjectMask o) {
        return CocoRle.decode(o.mask().counts(), o.mask().height(), o.mask().width());
    }

    public static double iou(boolean[] a, boolean[] b) {
        long inter = 0;
        long union = 0;
        for (int i = 0; i < a.length; i++) {
            inter += a[i] && b[i] ? 1 : 0;
            union += a[i] || b[i] ? 1 : 0;
        }
        return union == 0 ? 1 : (double) inter / union;
    }
}
