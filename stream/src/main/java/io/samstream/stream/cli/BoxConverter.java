package io.samstream.stream.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** {@code X0,Y0,X1,Y1}: a box in original image pixels. */
final class BoxConverter implements ITypeConverter<double[]> {
    @Override
    public double[] convert(String value) {
        double[] v = Numbers.parse(value, "box", "X0,Y0,X1,Y1");
        if (v.length != 4) {
            throw new TypeConversionException("box '" + value + "' must be X0,Y0,X1,Y1");
        }
        return v;
    }
}
