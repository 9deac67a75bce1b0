package io.samstream.stream.cli;

import picocli.CommandLine.TypeConversionException;

/** Comma-separated finite numbers, as the point and box options take them. */
final class Numbers {
    private Numbers() {}

    static double[] parse(String value, String what, String form) {
        String[] parts = value.split(",", -1);
        double[] out = new double[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                out[i] = Double.parseDouble(parts[i].trim());
            } catch (NumberFormatException e) {
                throw new TypeConversionException(what + " '" + value + "' must be " + form + " with numbers");
            }
            if (!Double.isFinite(out[i])) {
                throw new TypeConversionException(what + " '" + value + "' has a value that is not finite");
            }
        }
        return out;
    }

    static String format(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
