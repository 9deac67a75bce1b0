package io.samstream.stream.http;

import com.typesafe.config.ConfigFactory;
import io.samstream.config.ConfigLoader;
import io.samstream.stream.app.Demo;
import io.samstream.stream.app.DemoUi;
import io.samstream.stream.app.SamstreamRuntime;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium through chromedriver for the console's browser tests (Debian's chromium and chromium-driver);
 * a test that needs it skips, saying why, where they are not installed (CI installs them: .ci/run).
 */
final class ConsoleBrowser {
    static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

    private ConsoleBrowser() {}

    /** Skips the calling test, saying why, without Chromium or chromedriver. */
    static void assumeInstalled() {
        Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
                "no " + CHROMIUM + " or " + CHROMEDRIVER + " here: install Debian's chromium and chromium-driver"
                        + " (.ci/run does) to run the console's browser tests");
    }

    /** {@code samstream demo --ui --model model} on the CPU, its HTTP server on a free port; close it. */
    static SamstreamRuntime demo(Demo.Model model, Path dir) throws Exception {
        return DemoUi.start(ConfigLoader.validate(ConfigFactory.parseString("samstream { device = cpu }")
                .withFallback(ConfigFactory.defaultReference()).resolve(), "test"), Optional.of(model), dir,
                OptionalInt.of(0));
    }

    /** A fresh headless browser (its own profile); quit() it. */
    static ChromeDriver start() throws Exception {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
                "--user-data-dir=" + Files.createTempDirectory("samstream-chromium"), "--window-size=1200,1000");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort().withLogFile(new File(System.getProperty("java.io.tmpdir"), "samstream-chromedriver.log"))
                .build();
        return new ChromeDriver(service, options);
    }
}
