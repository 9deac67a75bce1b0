package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import io.samstream.connectors.video.TestPatternSource;
import io.samstream.gpu.mask.CocoRle;
import io.samstream.stream.app.Demo;
import io.samstream.stream.app.DemoUi;
import io.samstream.stream.app.SamstreamRuntime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in a real browser (headless Chromium through chromedriver) against a {@code samstream demo --ui}
 * engine (the bundled model, the embedded broker, the demo's live scene): the stream's live picture shows, a click on
 * a shape no prompt covers makes a new object whose id appears in the console's list and in the mask topic within 3 s,
 * its mask over the clicked point. Saves the screenshot docs/console.png. Skips, saying why, where Chromium or
 * chromedriver are not installed (CI installs them: .ci/run).
 */
@Timeout(300)
class ConsoleBrowserTest {
    static final Path SCREENSHOT = Path.of("../docs/console.png");
    /** The demo scene's generator, to know where its shapes are in the frame the console shows. */
    static final TestPatternSource SCENE = scene();
    static final Duration WITHIN = Duration.ofSeconds(3);
    @TempDir
    Path dir;

    @Test
    void aClickOnAShapeFollowsItAsANewObject() throws Exception {
        ConsoleBrowser.assumeInstalled();
        try (SamstreamRuntime rt = ConsoleBrowser.demo(Demo.Model.SAM, dir.resolve("demo"));
             KafkaConsumer<String, byte[]> masks = MasksTopic.fromNow(rt)) {
            ChromeDriver browser = ConsoleBrowser.start();
            try {
                browser.get(rt.httpServer().orElseThrow().url());
                WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(90));
                By picture = By.cssSelector("article[data-stream='demo'] canvas[data-frame]");
                long started = System.nanoTime();
                wait.until(d -> Integer.parseInt(d.findElement(picture).getDomAttribute("data-frames")) >= 3);
                System.out.printf("console: the live picture after %.1f s%n", (System.nanoTime() - started) / 1e9);
                WebElement canvas = browser.findElement(picture);
                assertTrue(painted(browser, canvas), "the live picture shows the stream");
                // The bundled SAM takes no concepts: the card shows no concept controls and says why.
                WebElement concepts = browser.findElement(By.cssSelector("article[data-stream='demo'] .concepts"));
                assertTrue(concepts.findElement(By.className("concepts-reason")).getText().contains("SAM 3"),
                        "the card says concepts need SAM 3");
                assertFalse(concepts.findElement(By.cssSelector("form.add-concept")).isDisplayed(),
                        "no concept form on a SAM stream");

                // A shape no object covers (ids 1-2 were prompted on shapes 0 and 1; tracking may have moved them), where
                // the shown frame has it clear of the other shapes.
                long shown = -1;
                TestPatternSource.PatternObject target = null;
                for (long deadline = System.nanoTime() + 60_000_000_000L; target == null && System.nanoTime() < deadline; ) {
                    shown = Long.parseLong(canvas.getDomAttribute("data-frame"));
                    target = clearShape(shown, boxes(rt));
                    if (target == null) {
                        Thread.sleep(200);
                    }
                }
                assertTrue(target != null, "a shape clear of the objects and the other shapes within 60 s");
                Set<String> before = Set.copyOf(objects(browser).keySet());
                // The console gives a new object the next id after every id it knows and the stream's prompts have.
                int newest = Math.max(before.stream().mapToInt(Integer::parseInt).max().orElse(0), maxPrompted(rt));
                long[] clicked = {target.centerX(), target.centerY()};
                var box = canvas.getRect();
                int dx = (int) Math.round((clicked[0] + 0.5) * box.getWidth() / 320.0 - box.getWidth() / 2.0);
                int dy = (int) Math.round((clicked[1] + 0.5) * box.getHeight() / 240.0 - box.getHeight() / 2.0);
                long t0 = System.nanoTime();
                new Actions(browser).moveToElement(canvas, dx, dy).click().perform();

                String id = null;
                MaskRecord found = null;
                while (System.nanoTime() - t0 < WITHIN.toNanos() && (id == null || found == null)) {
                    if (id == null) {
                        id = objects(browser).entrySet().stream().filter(e -> Integer.parseInt(e.getKey()) > newest
                                && e.getValue().equals("visible")).map(Map.Entry::getKey).findFirst().orElse(null);
                    }
                    for (ConsumerRecord<String, byte[]> r : masks.poll(Duration.ofMillis(50))) {
                        MaskRecord m = MaskRecordJson.read(r.value());
                        if (found == null && m.stream().equals("demo") && m.objects().stream()
                                .anyMatch(o -> o.id() > newest)) {
                            found = m;
                        }
                    }
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                System.out.printf("console: clicked %d,%d on frame %d; new object %s in the list, %s on the topic after"
                        + " %.2f s%n", clicked[0], clicked[1], shown, id, found == null ? "none" : "frame " + found.frame(),
                        seconds);
                assertTrue(id != null, "a new object in the console's list within " + WITHIN.toSeconds() + " s ("
                        + seconds + " s)");
                assertTrue(found != null, "a record with the new object on the mask topic within " + WITHIN.toSeconds()
                        + " s");
                int newId = Integer.parseInt(id);
                MaskRecord.ObjectMask o = found.objects().stream().filter(x -> x.id() == newId).findFirst()
                        .orElseThrow(() -> new AssertionError("the topic's new object is the console's " + newId));
                boolean[] mask = CocoRle.decode(o.mask().counts(), found.height(), found.width());
                assertTrue(mask[(int) (clicked[1] * found.width() + clicked[0])], "object " + newId
                        + "'s mask covers the clicked point " + clicked[0] + "," + clicked[1] + " (frame " + found.frame()
                        + ", shown " + shown + ", box " + o.box() + ")");
                assertFalse(before.contains(id));

                // The picture with the new object's mask drawn, for the docs.
                long after = found.frame();
                wait.until(d -> Long.parseLong(d.findElement(picture).getDomAttribute("data-frame")) > after);
                Files.createDirectories(SCREENSHOT.getParent());
                Files.write(SCREENSHOT, ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));

                // Swagger UI, from the jar under the console's content security policy, shows every route.
                browser.get(rt.httpServer().orElseThrow().url() + "api/docs/");
                wait.until(d -> d.findElements(By.cssSelector(".opblock")).size() >= Routes.ALL.size());
            } finally {
                browser.quit();
            }
        }
    }

    /**
     * A shape whose centre neither another shape nor an object's box ({@code objects}, the engine's now) covers in frame
     * {@code f}, away from the frame's edges; null when none is.
     */
    private static TestPatternSource.PatternObject clearShape(long f, List<int[]> objects) {
        List<TestPatternSource.PatternObject> shapes = SCENE.objectsAt(f);
        for (int i = shapes.size() - 1; i >= 0; i--) { // the biggest, slowest first (shape 3)
            TestPatternSource.PatternObject s = shapes.get(i);
            boolean clear = s.box()[0] > 8 && s.box()[1] > 8 && s.box()[2] < 312 && s.box()[3] < 232;
            for (int[] b : objects) {
                clear &= s.centerX() < b[0] - 8 || s.centerX() > b[2] + 8 || s.centerY() < b[1] - 8
                        || s.centerY() > b[3] + 8;
            }
            for (int j = 0; j < shapes.size() && clear; j++) {
                int[] b = shapes.get(j).box();
                clear = j == i || s.centerX() < b[0] - 12 || s.centerX() > b[2] + 12 || s.centerY() < b[1] - 12
                        || s.centerY() > b[3] + 12;
            }
            if (clear) {
                return s;
            }
        }
        return null;
    }

    /** Whether the canvas holds a picture (not one colour). */
    private static boolean painted(ChromeDriver browser, WebElement canvas) {
        Object distinct = ((JavascriptExecutor) browser).executeScript("""
                const c = arguments[0];
                const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                const seen = new Set();
                for (let i = 0; i < d.length; i += 4 * 97) seen.add(d[i] << 16 | d[i + 1] << 8 | d[i + 2]);
                return seen.size;""", canvas);
        return ((Number) distinct).intValue() > 20;
    }

    /** The console's object list of the demo stream: id -> state (read at once: the list changes every frame). */
    @SuppressWarnings("unchecked")
    private static Map<String, String> objects(ChromeDriver browser) {
        return (Map<String, String>) ((JavascriptExecutor) browser).executeScript(
                "const out = {};"
                + " document.querySelectorAll(\"article[data-stream='demo'] .objects li\")"
                + ".forEach(li => { out[li.dataset.objectId] = li.dataset.state; });"
                + " return out;");
    }

    /** The boxes of the demo stream's objects in its latest frame, from the API. */
    private static List<int[]> boxes(SamstreamRuntime rt) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest
                .newBuilder(java.net.URI.create(rt.httpServer().orElseThrow().url() + "api/v1/streams/demo")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        List<int[]> out = new java.util.ArrayList<>();
        for (var o : new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body()).get("objects")) {
            if (o.has("box")) {
                out.add(new int[] {o.get("box").get(0).asInt(), o.get("box").get(1).asInt(), o.get("box").get(2).asInt(),
                    o.get("box").get(3).asInt()});
            }
        }
        return out;
    }

    /** The demo's scene as its stream's location makes it. */
    private static TestPatternSource scene() {
        try {
            return (TestPatternSource) io.samstream.connectors.video.FrameSources.open(
                    io.samstream.connectors.video.SourceSpec.of("demo", DemoUi.LOCATION));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The largest id of the demo stream's prompts now. */
    private static int maxPrompted(SamstreamRuntime rt) {
        return rt.engine().stream("demo").orElseThrow().promptedIds().stream().mapToInt(Integer::intValue).max().orElse(0);
    }
}
