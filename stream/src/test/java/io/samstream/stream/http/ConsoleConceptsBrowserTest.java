package io.samstream.stream.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.samstream.stream.engine.StreamHandle;
import io.samstream.stream.engine.TinySam3Checkpoint;
import io.samstream.stream.track.ConceptPrompt;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The console's concept controls in a real browser (headless Chromium, {@link ConsoleBrowser}) against an engine on a
 * tiny SAM 3 checkpoint ({@link TinySam3Checkpoint}) with a live test-pattern stream: the configured concept is listed;
 * a phrase typed and sent is listed (as text, never HTML) and the engine's prompts look for it; a box dragged on the
 * picture goes with the next phrase as its exemplar, in frame pixels; the same phrase again and a phrase over the limit are refused with
 * their reasons on the message line; remove stops the engine looking for it.
 */
@Timeout(300)
class ConsoleConceptsBrowserTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String CARD = "article[data-stream='dock'] ";
    @TempDir
    Path dir;

    @Test
    void conceptsAreAddedListedRefusedAndRemovedFromTheConsole() throws Exception {
        ConsoleBrowser.assumeInstalled();
        Path checkpoint = TinySam3Checkpoint.write(dir);
        try (ApiEngine api = ApiEngine.start(dir, checkpoint, """
                limits.max-concept-chars = 12
                streams = [ { id = dock, location = "testpattern:96x64@5?live=true&seed=1&speed=0.1",
                              prompts.concepts = ["square"] } ]
                """, HttpClient.newHttpClient())) {
            StreamHandle dock = api.runtime.engine().stream("dock").orElseThrow();
            assertTrue(dock.findsConcepts(), "the tiny SAM 3 finds objects by concepts");
            ChromeDriver browser = ConsoleBrowser.start();
            try {
                browser.get(api.base.toString());
                WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(90));
                wait.until(d -> d.findElement(By.cssSelector(CARD + "form.add-concept")).isDisplayed());
                wait.until(d -> listed(browser).equals(List.of("square")));

                // A phrase typed and sent: listed, and the engine's prompts look for it.
                find(browser, "person");
                wait.until(d -> listed(browser).equals(List.of("square", "person")));
                waitFor(() -> ConsolePage.concepts(dock).equals(List.of("square", "person")), "the engine looks for person");
                assertEquals(List.of("square", "person"), apiConcepts(api), "the API's stream view lists them");
                assertTrue(ConsolePage.status(browser).contains("looks for \"person\""), ConsolePage.status(browser));

                // A phrase is user text: shown as typed, never read as HTML.
                find(browser, "<i>box</i>");
                wait.until(d -> listed(browser).equals(List.of("square", "person", "<i>box</i>")));
                assertTrue(browser.findElements(By.cssSelector(CARD + ".concepts i")).isEmpty(), "no element made");
                browser.findElement(By.cssSelector(CARD + ".concept-list li:nth-child(3) button")).click();
                waitFor(() -> ConsolePage.concepts(dock).equals(List.of("square", "person")), "the engine no longer looks for it");

                // The same phrase again: concept_exists; one past max-concept-chars: bad_concept.
                find(browser, "person");
                wait.until(d -> ConsolePage.status(browser).contains("concept_exists"));
                assertTrue(browser.findElement(By.id("status")).getDomAttribute("class").contains("error"));
                find(browser, "a forklift truck");
                wait.until(d -> ConsolePage.status(browser).contains("bad_concept"));
                assertEquals(List.of("square", "person"), ConsolePage.concepts(dock), "refused phrases change nothing");

                // A box dragged on the picture goes with the next phrase as its exemplar (frame pixels: 96 x 64).
                By picture = By.cssSelector(CARD + "canvas[data-frame]");
                wait.until(d -> d.findElement(picture).isDisplayed());
                WebElement canvas = browser.findElement(picture);
                int w = canvas.getRect().getWidth();
                int h = canvas.getRect().getHeight();
                new Actions(browser).moveToElement(canvas, -w / 4, -h / 4).clickAndHold()
                        .moveByOffset(w / 4, h / 4).release().perform();
                wait.until(d -> d.findElement(By.cssSelector(CARD + ".exemplars")).getText().startsWith("1 exemplar box"));
                find(browser, "crate");
                waitFor(() -> ConsolePage.concepts(dock).contains("crate"), "the engine looks for crate");
                ConceptPrompt crate = dock.concepts().stream().filter(c -> c.text().equals("crate")).findFirst()
                        .orElseThrow();
                assertEquals(1, crate.boxes().size(), "the dragged box went with it: " + crate);
                ConceptPrompt.Box b = crate.boxes().get(0);
                assertTrue(b.positive() && near(b.x0(), 24) && near(b.y0(), 16) && near(b.x1(), 48) && near(b.y1(), 32),
                        "the box in frame pixels, the picture's upper left-centre quarter: " + b);
                wait.until(d -> d.findElement(By.cssSelector(CARD + ".exemplars")).getText().startsWith("no exemplar"));

                // Remove: the engine stops looking for it and the list drops it.
                browser.findElement(By.cssSelector(CARD + ".concept-list li[data-concept='person'] button")).click();
                waitFor(() -> ConsolePage.concepts(dock).equals(List.of("square", "crate")), "the engine no longer looks for person");
                wait.until(d -> listed(browser).equals(List.of("square", "crate")));
            } finally {
                browser.quit();
            }
        }
    }

    private static void find(ChromeDriver browser, String phrase) {
        WebElement input = browser.findElement(By.cssSelector(CARD + "form.add-concept input[name='text']"));
        input.clear();
        input.sendKeys(phrase);
        browser.findElement(By.cssSelector(CARD + "form.add-concept button[type='submit']")).click();
    }

    private static List<String> listed(ChromeDriver browser) {
        return ConsolePage.listed(browser, CARD);
    }

    private static List<String> apiConcepts(ApiEngine api) throws Exception {
        JsonNode view = JSON.readTree(api.get("api/v1/streams/dock").body());
        List<String> out = new ArrayList<>();
        view.get("concepts").forEach(c -> out.add(c.asText()));
        return out;
    }

    /** Within a pixel or two: the drag's ends are whole client pixels of a scaled picture. */
    private static boolean near(double v, double expected) {
        return Math.abs(v - expected) <= 2;
    }

    private static void waitFor(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        ApiEngine.waitFor(condition, Duration.ofSeconds(10), what);
    }
}
