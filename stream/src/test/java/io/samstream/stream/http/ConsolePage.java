package io.samstream.stream.http;

import io.samstream.stream.engine.StreamHandle;
import io.samstream.stream.track.ConceptPrompt;
import java.util.List;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;

/** What the console's browser tests read off the page, and the engine's side of the same. */
final class ConsolePage {
    private ConsolePage() {}

    /** The phrases a card lists, in order ({@code card}: its CSS selector with a trailing space). */
    @SuppressWarnings("unchecked")
    static List<String> listed(WebDriver browser, String card) {
        return (List<String>) ((JavascriptExecutor) browser).executeScript("return [...document.querySelectorAll("
                + "\"" + card + ".concept-list li\")].map(li => li.querySelector('.phrase').textContent);");
    }

    /** The console's message line. */
    static String status(WebDriver browser) {
        return browser.findElement(By.id("status")).getText();
    }

    /** The phrases a stream's prompts look for now. */
    static List<String> concepts(StreamHandle h) {
        return h.concepts().stream().map(ConceptPrompt::text).toList();
    }
}
