package io.samstream.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class FixturesTest {
    @Test
    void theRootIsTheCheckoutAboveThisModule() {
        Path root = Fixtures.root();
        assertTrue(Files.isRegularFile(root.resolve("testkit/pom.xml")), root.toString());
        // Maven runs this module's tests in testkit/: the root is its parent.
        assertEquals(Path.of("").toAbsolutePath().normalize().getParent(), root);
    }

    @Test
    void theModelsAreWhereTheTestsExpectThem() throws Exception {
        for (Path p : new Path[] {TestModels.demoSam(), TestModels.demoSam2(), TestModels.tinySam(),
                TestModels.tinySam2()}) {
            assertTrue(Files.size(p) > 10_000, p + " is a model file");
        }
        assertEquals(TestModels.tinySamDir().resolve("model.pth"), TestModels.tinySam());
        assertEquals(TestModels.tinySam2Dir().resolve("checkpoint.pt"), TestModels.tinySam2());
        assertTrue(Files.isDirectory(Fixtures.gpuFixture("tiny256/landscape-shrink")));
    }

    @Test
    void aMissingFileIsNamed() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Fixtures.file("examples/no-such.pth"));
        assertTrue(e.getMessage().contains("examples/no-such.pth"), e.getMessage());
        e = assertThrows(IllegalStateException.class, () -> Fixtures.gpuFixture("tiny256/none.pth"));
        assertTrue(e.getMessage().contains("tiny256/none.pth"), e.getMessage());
    }
}
