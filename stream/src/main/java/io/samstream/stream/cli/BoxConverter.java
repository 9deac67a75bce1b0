package io.samstream.stream.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** {@code X0,Y0,X1,Y1}: a box in original image pixels. */
final class BoxConverter implements ITypeConverter<BoxConverter.Box> {
    /** A parsed {@code --box}; a record, since picocli would split an array option into elements. */
    record Box(double[] corners) {}

    @Override
    public Box convert(String value) {
        double[] v = Numbers.parse(value, "box", "X0,Y0,X1,Y1");
        if (v.length != 4) {
            throw new TypeConversionException("box '" + value + "' must be X0,Y0,X1,Y1");
        }
        return new Box(v);
    }
}
