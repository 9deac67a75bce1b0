package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.config.PromptSpec;
import io.samstream.connectors.record.MaskRecord;
import io.samstream.connectors.record.MaskRecordJson;
import io.samstream.stream.app.Demo;
import io.samstream.stream.app.SamstreamRuntime;
import io.samstream.stream.engine.StreamHandle;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The console's SAM 3 concept panel in a real browser (headless Chromium, {@link ConsoleBrowser}) against a
 * {@code samstream demo --ui --model sam3} engine (the bundled tiny SAM 3 on the CPU, the embedded broker, the demo's
 * live scene): the demo card lists the concepts the demo looks for ("red circle", "square"); once the engine found a
 * square, remove drops "square" from the list and the engine's prompts; "square" typed and sent is listed again, the
 * input cleared, and the engine finds it anew: a record on the mask topic, from the frame the console said, carries a
 * new object of concept "square" (what the controls refuse, and exemplar boxes: {@link ConsoleConceptsBrowserTest}).
 * Skips, saying why, where Chromium or chromedriver are not installed.
 */
@Timeout(300)
class DemoSam3ConsoleBrowserTest {
    static final String CARD = "article[data-stream='demo'] ";
    static final ObjectMapper JSON = new ObjectMapper();
    /** How soon the list and the engine follow a click (the engine applies a concept op at once). */
    static final Duration AT_ONCE = Duration.ofSeconds(5);
    /** How soon a concept added is found on the mask topic: the tiny SAM 3 runs at about 1 frame/s on a CPU. */
    static final Duration FOUND_WITHIN = Duration.ofSeconds(60);
    /** What the console says when the engine took a concept op: from which frame it applies. */
    static final Pattern LOOKS_FOR = Pattern.compile("demo: looks for \"square\" from frame (\\d+)");
    static final Pattern NO_LONGER_LOOKS_FOR =
            Pattern.compile("demo: no longer looks for \"square\" from frame (\\d+)");
    @TempDir
    Path dir;

    @Test
    void aConceptIsRemovedAndAddedBackFromTheConsole() throws Exception {
        ConsoleBrowser.assumeInstalled();
        try (SamstreamRuntime rt = ConsoleBrowser.demo(Demo.Model.SAM3, dir.resolve("demo"))) {
            StreamHandle demo = rt.engine().stream("demo").orElseThrow();
            assertTrue(demo.findsConcepts(), "the bundled SAM 3 finds objects by concepts");
            String url = rt.httpServer().orElseThrow().url();
            ChromeDriver browser = ConsoleBrowser.start();
            try {
                long started = System.nanoTime();
                browser.get(url);
                WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(90));
                wait.until(d -> listed(d).equals(List.of("red circle", "square")));
                double shown = seconds(started);
                WebElement panel = browser.findElement(By.cssSelector(CARD + ".concepts"));
                WebElement input = panel.findElement(By.cssSelector("form.add-concept input[name='text']"));
                assertTrue(panel.findElement(By.cssSelector("form.add-concept")).isDisplayed(), "the add form shows");
                assertTrue(input.isEnabled(), "its input takes a phrase");
                assertFalse(panel.findElement(By.className("concepts-reason")).isDisplayed(),
                        "no reason why not on a SAM 3 stream");
                // The engine finds the demo's square before it is removed (its objects: ids from 1000000 up).
                Set<Integer> squaresBefore = objectsOf(url, "square");
                while (squaresBefore.isEmpty() && System.nanoTime() - started < FOUND_WITHIN.toNanos()) {
                    Thread.sleep(200);
                    squaresBefore = objectsOf(url, "square");
                }
                double foundFirst = seconds(started);
                assertFalse(squaresBefore.isEmpty(), "the engine finds a square within " + FOUND_WITHIN.toSeconds()
                        + " s of the start");

                try (KafkaConsumer<String, byte[]> masks = MasksTopic.fromNow(rt)) {
                    // Remove "square": the list drops it at once, the engine no longer looks for it, and the records
                    // from the frame the console says on carry no square.
                    long t0 = System.nanoTime();
                    panel.findElement(By.cssSelector(".concept-list li[data-concept='square'] button")).click();
                    new WebDriverWait(browser, AT_ONCE).until(d -> listed(d).equals(List.of("red circle")));
                    double removed = seconds(t0);
                    ApiEngine.waitFor(() -> ConsolePage.concepts(demo).equals(List.of("red circle")), AT_ONCE,
                            "the engine no longer looks for square: " + ConsolePage.concepts(demo));
                    assertEquals(List.of("red circle"), apiConcepts(url), "the API's stream view agrees");
                    long removedFrom = saidFrom(browser, NO_LONGER_LOOKS_FOR);
                    long published = -1; // the newest frame read from the topic
                    while (published < removedFrom && System.nanoTime() - t0 < FOUND_WITHIN.toNanos()) {
                        for (MaskRecord m : demoRecords(masks)) {
                            published = Math.max(published, m.frame());
                            assertTrue(m.frame() < removedFrom || concept(m, "square").isEmpty(), "frame "
                                    + m.frame() + " has a square after it was removed from frame " + removedFrom);
                        }
                    }
                    assertTrue(published >= removedFrom, "frame " + removedFrom + " on the topic within "
                            + FOUND_WITHIN.toSeconds() + " s");
                    double removedOnTopic = seconds(t0);

                    // Type "square" and press Enter: listed again, the input cleared, the engine looks for it from a
                    // frame after those published, and the first record with a square is of that frame or later.
                    long t1 = System.nanoTime();
                    input.sendKeys("square", Keys.ENTER);
                    new WebDriverWait(browser, AT_ONCE).until(d -> listed(d).equals(List.of("red circle", "square"))
                            && input.getDomProperty("value").isEmpty());
                    double listedAgain = seconds(t1);
                    ApiEngine.waitFor(() -> ConsolePage.concepts(demo).equals(List.of("red circle", "square")), AT_ONCE,
                            "the engine looks for square again: " + ConsolePage.concepts(demo));
                    assertEquals(List.of("red circle", "square"), apiConcepts(url), "the API's stream view agrees");
                    long from = saidFrom(browser, LOOKS_FOR);
                    assertTrue(from > published, "square is looked for from frame " + from + ", after frame "
                            + published + " published before it was sent");
                    MaskRecord found = null;
                    Optional<MaskRecord.ObjectMask> square = Optional.empty();
                    while (found == null && System.nanoTime() - t1 < FOUND_WITHIN.toNanos()) {
                        for (MaskRecord m : demoRecords(masks)) {
                            if (found == null && concept(m, "square").isPresent()) {
                                found = m;
                                square = concept(m, "square");
                            }
                        }
                    }
                    double onTopic = seconds(t1);
                    System.out.printf("concept console: listed after %.1f s, square found (objects %s) after %.1f s;"
                            + " removed in %.2f s (from frame %d, on the topic after %.1f s)%n", shown, squaresBefore,
                            foundFirst, removed, removedFrom, removedOnTopic);
                    System.out.printf("concept console: square added back in %.2f s (from frame %d), found %s after"
                            + " %.1f s%n", listedAgain, from, found == null ? "nowhere" : "as object "
                            + square.get().id() + " on frame " + found.frame() + " (box " + square.get().box() + ")",
                            onTopic);
                    assertTrue(found != null, "an object of concept square on the mask topic within "
                            + FOUND_WITHIN.toSeconds() + " s of adding it");
                    assertTrue(found.frame() >= from, "a square on frame " + found.frame() + ", before frame " + from
                            + " the concept was added back from");
                    MaskRecord.ObjectMask o = square.get();
                    assertTrue(o.id() >= PromptSpec.DISCOVERED_ID_BASE, "a found object's id: " + o.id());
                    assertFalse(squaresBefore.contains(o.id()), "a new object, not one removed with the concept "
                            + squaresBefore);
                    assertTrue(o.area() > 0 && o.box().x1() > o.box().x0() && o.box().y1() > o.box().y0(),
                            "a mask with an area: " + o);
                }
            } finally {
                browser.quit();
            }
        }
    }

    private static List<String> listed(WebDriver browser) {
        return ConsolePage.listed(browser, CARD);
    }

    private static String status(WebDriver browser) {
        return ConsolePage.status(browser);
    }

    /**
     * The frame from which the console's message line says the engine applies a concept op (the line follows the
     * engine's answer; the list may follow the stream's view before it).
     */
    private static long saidFrom(WebDriver browser, Pattern said) {
        Matcher m = new WebDriverWait(browser, AT_ONCE).withMessage(() -> "the console says from which frame: "
                + status(browser)).until(d -> {
                    Matcher x = said.matcher(status(d));
                    return x.find() ? x : null;
                });
        return Long.parseLong(m.group(1));
    }

    /** The demo stream's records that the topic has next (waits up to 100 ms). */
    private static List<MaskRecord> demoRecords(KafkaConsumer<String, byte[]> masks) throws Exception {
        List<MaskRecord> out = new ArrayList<>();
        for (ConsumerRecord<String, byte[]> r : masks.poll(Duration.ofMillis(100))) {
            MaskRecord m = MaskRecordJson.read(r.value());
            if (m.stream().equals("demo")) {
                out.add(m);
            }
        }
        return out;
    }

    /** A record's first object of a concept. */
    private static Optional<MaskRecord.ObjectMask> concept(MaskRecord m, String concept) {
        return m.objects().stream().filter(o -> concept.equals(o.concept())).findFirst();
    }

    /** The demo stream as the API shows it. */
    private static JsonNode view(String url) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(url + "api/v1/streams/demo")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body());
    }

    /** The concepts of the demo stream, from the API. */
    private static List<String> apiConcepts(String url) throws Exception {
        List<String> out = new ArrayList<>();
        view(url).get("concepts").forEach(c -> out.add(c.asText()));
        return out;
    }

    /** The ids of the demo stream's objects of a concept now, from the API. */
    private static Set<Integer> objectsOf(String url, String concept) throws Exception {
        Set<Integer> out = new TreeSet<>();
        for (JsonNode o : view(url).get("objects")) {
            if (concept.equals(o.path("concept").asText(null))) {
                out.add(o.get("id").asInt());
            }
        }
        return out;
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }
}
