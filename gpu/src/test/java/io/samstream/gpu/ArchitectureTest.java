package io.samstream.gpu;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gpu module's floors, checked on its compiled main classes (no GPU needed). The CUDA packages bottom up: the
 * runtime ({@code cuda}), the launchers ({@code cuda.kernels}), the blocks several models share ({@code cuda.blocks}),
 * then the models' GPU parts ({@code cuda.sam}, {@code cuda.sam2}, {@code cuda.sam3}), which share nothing with each
 * other but what lies below them, except that SAM 3's tracker is SAM 2.1's parts: {@code cuda.sam3} sits on
 * {@code cuda.sam2}; no floor imports one above it. No package of the module is in a cycle, and the module knows nothing of
 * the engine, Akka or Kafka.
 */
class ArchitectureTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.samstream.gpu");
    }

    @Test
    void theCudaPackagesImportOnlyTheFloorsBelowThem() {
        ArchRule floors = layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("runtime").definedBy("io.samstream.gpu.cuda")
                .layer("kernels").definedBy("io.samstream.gpu.cuda.kernels..")
                .layer("blocks").definedBy("io.samstream.gpu.cuda.blocks..")
                .layer("sam").definedBy("io.samstream.gpu.cuda.sam..")
                .layer("sam2").definedBy("io.samstream.gpu.cuda.sam2..")
                .layer("sam3").definedBy("io.samstream.gpu.cuda.sam3..")
                .whereLayer("runtime").mayOnlyBeAccessedByLayers("kernels", "blocks", "sam", "sam2", "sam3")
                .whereLayer("kernels").mayOnlyBeAccessedByLayers("blocks", "sam", "sam2", "sam3")
                .whereLayer("blocks").mayOnlyBeAccessedByLayers("sam", "sam2", "sam3")
                .whereLayer("sam").mayNotBeAccessedByAnyLayer()
                .whereLayer("sam2").mayOnlyBeAccessedByLayers("sam3")
                .whereLayer("sam3").mayNotBeAccessedByAnyLayer();
        floors.check(classes);
    }

    /** Every package its own slice, the module's root package ({@code SamModels}, {@code ModelCheckpoints}) too. */
    @Test
    void noPackageOfTheModuleIsInACycle() {
        SliceAssignment byPackage = new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                String p = c.getPackageName();
                return p.equals("io.samstream.gpu") || p.startsWith("io.samstream.gpu.") ? SliceIdentifier.of(p)
                        : SliceIdentifier.ignore();
            }

            @Override
            public String getDescription() {
                return "the packages of io.samstream.gpu";
            }
        };
        slices().assignedFrom(byPackage).should().beFreeOfCycles().check(classes);
    }

    /**
     * The same floors in the sources' import lines, which the rule above cannot see when an import serves only a
     * comment ({@code {@link}}): a floor names one above it in {@code {@code ...}}, never through an import.
     */
    @Test
    void noSourceImportsAHigherCudaFloor() throws IOException {
        Map<String, Integer> floor = Map.of("io.samstream.gpu.cuda", 0, "io.samstream.gpu.cuda.kernels", 1,
                "io.samstream.gpu.cuda.blocks", 2, "io.samstream.gpu.cuda.sam", 3, "io.samstream.gpu.cuda.sam2", 3,
                "io.samstream.gpu.cuda.sam3", 4);
        Pattern packageLine = Pattern.compile("(?m)^package ([\\w.]+);");
        Pattern cudaImport = Pattern.compile(
                "(?m)^import (?:static )?(io\\.samstream\\.gpu\\.cuda(?:\\.[a-z]\\w*)*)\\.[A-Z][\\w.]*;");
        List<String> upward = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java/io/samstream/gpu/cuda"))) {
            for (Path f : files.filter(x -> x.toString().endsWith(".java")).toList()) {
                String source = Files.readString(f);
                Matcher pkg = packageLine.matcher(source);
                String from = pkg.find() ? pkg.group(1) : "";
                Matcher m = cudaImport.matcher(source);
                while (m.find()) {
                    String to = m.group(1);
                    int a = floor.getOrDefault(from, -1), b = floor.getOrDefault(to, -1);
                    if (b > a || (b == a && !to.equals(from))) {
                        upward.add(f.getFileName() + " (" + from + "): " + m.group().trim());
                    }
                }
            }
        }
        assertEquals(List.of(), upward, "imports of a CUDA floor above the file's own or beside it");
    }

    @Test
    void theModuleKnowsNothingOfTheEngineAkkaOrKafka() {
        noClasses().that().resideInAPackage("io.samstream.gpu..").should().dependOnClassesThat()
                .resideInAnyPackage("akka..", "org.apache.pekko..", "org.apache.kafka..", "kafka..",
                        "io.samstream.stream..", "io.samstream.connectors..")
                .check(classes);
    }
}
