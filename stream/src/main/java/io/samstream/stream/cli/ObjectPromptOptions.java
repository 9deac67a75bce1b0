package io.samstream.stream.cli;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** The object and its prompt of {@code samstream prompts add|update}. */
final class ObjectPromptOptions {
    @Option(names = "--object", required = true, paramLabel = "N", description = "The object's id (0 to 999999).")
    int object;

    @Option(names = "--point", paramLabel = "X,Y[,LABEL]", converter = PointConverter.class,
            description = "A point in frame pixels; LABEL 1 (default) = foreground, 0 = background. Repeatable.")
    List<double[]> points = new ArrayList<>();

    @Option(names = "--box", paramLabel = "X0,Y0,X1,Y1", converter = BoxConverter.class,
            description = "A box in frame pixels.")
    BoxConverter.Box box;
}
