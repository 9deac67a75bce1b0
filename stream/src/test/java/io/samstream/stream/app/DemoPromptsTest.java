package io.samstream.stream.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.samstream.config.ConfigLoader;
import io.samstream.config.PromptSpec;
import io.samstream.config.SamstreamConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the demo's stream is prompted with: the bundled SAM 3's concepts, else the shapes' boxes. */
class DemoPromptsTest {
    @TempDir
    Path dir;

    @Test
    void theBundledSam3LooksForItsConceptsAndTheOthersKeepTheirPrompts() {
        PromptSpec boxes = Demo.firstFrameBoxes();
        assertEquals(List.of("red circle", "square"),
                Demo.Model.prompts(Optional.of(Demo.Model.SAM3), boxes).concepts());
        assertTrue(Demo.Model.prompts(Optional.of(Demo.Model.SAM3), boxes).objects().isEmpty());
        assertSame(boxes, Demo.Model.prompts(Optional.of(Demo.Model.SAM2), boxes));
        assertSame(boxes, Demo.Model.prompts(Optional.empty(), boxes));
    }

    @Test
    void theConsoleDemoWithSam3LooksForTheConceptsWithNoBoxes() {
        SamstreamConfig base = ConfigLoader.load();
        SamstreamConfig sam3 = DemoUi.config(base, Optional.of(Demo.Model.SAM3), dir, OptionalInt.of(0));
        assertEquals(Demo.Model.SAM3.locate(), sam3.checkpoint().orElseThrow());
        PromptSpec p = sam3.streams().get(0).prompts();
        assertEquals(List.of("red circle", "square"), p.concepts());
        assertTrue(p.objects().isEmpty());
        PromptSpec sam = DemoUi.config(base, Optional.of(Demo.Model.SAM), dir, OptionalInt.of(0)).streams().get(0)
                .prompts();
        assertEquals(DemoUi.PROMPTED, sam.objects().size());
        assertTrue(sam.concepts().isEmpty());
    }
}
