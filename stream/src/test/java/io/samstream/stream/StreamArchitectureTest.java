package io.samstream.stream;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import io.samstream.stream.engine.Engine;
import java.net.URISyntaxException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The stream module's rooms, checked on its compiled main classes: tracking knows the mask records' domain package but
 * not the Kafka connector; each tracking mode is a package of its own that the other does not reach into; the shared
 * {@code track} package knows neither mode (the engine picks one through {@code track.Tracking}); and no cycle runs
 * between the module's packages.
 */
class StreamArchitectureTest {
    static final String TRACK = "io.samstream.stream.track";
    static final String KALMAN = TRACK + ".kalman..";
    static final String MEMORY = TRACK + ".memory..";

    static final ArchRule TRACK_KNOWS_NO_KAFKA = noClasses().that().resideInAPackage(TRACK + "..")
            .should().dependOnClassesThat().resideInAPackage("io.samstream.connectors.kafka..")
            .because("the tracker makes mask records (connectors.record); publishing them is the sinks' business");

    static final ArchRule KALMAN_AND_MEMORY_APART = noClasses().that().resideInAPackage(KALMAN)
            .should().dependOnClassesThat().resideInAPackage(MEMORY)
            .because("kalman mode and memory mode share only the track package");

    static final ArchRule MEMORY_AND_KALMAN_APART = noClasses().that().resideInAPackage(MEMORY)
            .should().dependOnClassesThat().resideInAPackage(KALMAN)
            .because("kalman mode and memory mode share only the track package");

    static final ArchRule SHARED_TRACK_KNOWS_NO_MODE = noClasses().that().resideInAPackage(TRACK)
            .should().dependOnClassesThat().resideInAnyPackage(KALMAN, MEMORY)
            .because("the modes build on the shared types, not the other way round");

    static final ArchRule NO_PACKAGE_CYCLES = slices().matching("io.samstream.stream.(**)")
            .should().beFreeOfCycles();

    static JavaClasses classes;

    /**
     * The module's main classes, from where they were compiled (not a scan of the whole class path); what they
     * depend on is known by name, which is all the rules need.
     */
    @BeforeAll
    static void importMainClasses() throws URISyntaxException {
        Path main = Path.of(Engine.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        ArchConfiguration config = ArchConfiguration.get();
        boolean resolve = config.resolveMissingDependenciesFromClassPath();
        config.setResolveMissingDependenciesFromClassPath(false);
        try {
            classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .importPath(main);
        } finally {
            config.setResolveMissingDependenciesFromClassPath(resolve);
        }
        if (!classes.containPackage(TRACK) || !classes.containPackage("io.samstream.stream.engine")) {
            throw new IllegalStateException("the stream module's classes are not in " + main);
        }
    }

    @Test
    void trackDoesNotImportTheKafkaConnector() {
        TRACK_KNOWS_NO_KAFKA.check(classes);
    }

    @Test
    void kalmanAndMemoryModesDoNotImportEachOther() {
        KALMAN_AND_MEMORY_APART.check(classes);
        MEMORY_AND_KALMAN_APART.check(classes);
    }

    @Test
    void theSharedTrackPackageImportsNoMode() {
        SHARED_TRACK_KNOWS_NO_MODE.check(classes);
    }

    @Test
    void noCycleBetweenTheModulesPackages() {
        NO_PACKAGE_CYCLES.check(classes);
    }
}
