package io.samstream.stream.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** {@code X,Y[,LABEL]}: a point in original image pixels; the label is 1 (foreground) unless given. */
final class PointConverter implements ITypeConverter<double[]> {
    @Override
    public double[] convert(String value) {
        double[] v = Numbers.parse(value, "point", "X,Y[,LABEL]");
        if (v.length != 2 && v.length != 3) {
            throw new TypeConversionException("point '" + value + "' must be X,Y or X,Y,LABEL");
        }
        double label = v.length == 3 ? v[2] : 1;
        if (label != 0 && label != 1) {
            throw new TypeConversionException(
                    "point '" + value + "' has label " + Numbers.format(label) + " (1 = foreground, 0 = background)");
        }
        return new double[] {v[0], v[1], label};
    }
}
