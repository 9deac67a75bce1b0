package io.samstream.stream.discovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.Device;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.connectors.video.TestPatternSource.PatternObject;
import io.samstream.gpu.SamModels;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.predict.AutomaticMaskGenerator;
import io.samstream.gpu.predict.AutomaticMaskGenerator.Settings;
import io.samstream.gpu.predict.GeneratedMask;
import io.samstream.gpu.predict.SamPredictor;
import io.samstream.testkit.CocoMasks;
import io.samstream.testkit.TestModels;
import io.samstream.testkit.connectors.PatternTruth;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Automatic mask generation with the bundled demo model on frames of {@link TestPatternSource}, the
 * kind of scene it was trained on: every shape is found (mask IoU >= 0.7 against the shape's visible
 * pixels) by exactly one mask, and nothing else survives. A 10 x 10 grid (100 decodes) keeps it quick;
 * the shapes are large enough for it.
 */
class AutomaticMaskGeneratorSceneTest {
    private static final Path MODEL = TestModels.demoSam();
    private static final int W = 320;
    private static final int H = 240;

    private static SamBackend backend;

    @BeforeAll
    static void open() {
        backend = SamModels.open(MODEL, Device.CPU, 2);
    }

    @AfterAll
    static void close() {
        backend.close();
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 4})
    void findsEveryShapeExactlyOnce(long seed) {
        TestPatternSource source = new TestPatternSource("s", W, H, 25, 1, seed, false);
        byte[] rgb = source.render(0);
        SamPredictor predictor = new SamPredictor(backend);
        predictor.setImage(new RgbImage(W, H, rgb));
        AutomaticMaskGenerator generator = new AutomaticMaskGenerator(backend,
                Settings.defaults().withPointsPerSide(10).withMinArea(100));
        List<GeneratedMask> masks = generator.generate(predictor.embedding(), W, H);

        List<PatternObject> objects = source.objectsAt(0);
        double[][] iou = new double[masks.size()][objects.size()];
        for (int m = 0; m < masks.size(); m++) {
            boolean[] mask = generator.mask(masks.get(m), W, H);
            for (int o = 0; o < objects.size(); o++) {
                iou[m][o] = CocoMasks.iou(mask, PatternTruth.visible(rgb, W, H, objects.get(o)));
            }
        }
        String table = describe(masks, objects, iou);
        assertEquals(objects.size(), masks.size(), "one mask per shape" + table);
        for (int o = 0; o < objects.size(); o++) {
            int matches = 0;
            for (int m = 0; m < masks.size(); m++) {
                matches += iou[m][o] >= 0.7 ? 1 : 0;
            }
            assertEquals(1, matches, objects.get(o).id() + " found exactly once" + table);
        }
        for (int m = 1; m < masks.size(); m++) {
            assertTrue(masks.get(m - 1).predictedIou() >= masks.get(m).predictedIou(), "best first" + table);
        }
    }

    private static String describe(List<GeneratedMask> masks, List<PatternObject> objects, double[][] iou) {
        StringBuilder sb = new StringBuilder();
        for (int m = 0; m < masks.size(); m++) {
            GeneratedMask g = masks.get(m);
            sb.append(String.format(Locale.ROOT, "%n  mask %d: predicted %.3f, stability %.3f, area %d, IoU with",
                    m, g.predictedIou(), g.stability(), g.area()));
            for (int o = 0; o < objects.size(); o++) {
                sb.append(String.format(Locale.ROOT, " %s %.3f", objects.get(o).id(), iou[m][o]));
            }
        }
        return sb.toString();
    }
}
