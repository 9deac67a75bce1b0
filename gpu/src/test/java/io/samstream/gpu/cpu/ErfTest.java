package io.samstream.gpu.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.MathContext;
import org.junit.jupiter.api.Test;

class ErfTest {
    /** x, erf(x), erfc(x) from a correctly rounded libm (CPython's math.erf / math.erfc). */
    private static final double[][] KNOWN = {
        {0.0, 0.0, 1.0},
        {1e-8, 1.1283791670955126e-08, 0.9999999887162083},
        {0.1, 0.1124629160182849, 0.8875370839817152},
        {0.5, 0.5204998778130465, 0.4795001221869535},
        {1.0, 0.8427007929497149, 0.15729920705028513},
        {1.4999, 0.9660932516622953, 0.03390674833770473},
        {1.5, 0.9661051464753108, 0.033894853524689274},
        {2.0, 0.9953222650189527, 0.004677734981047265},
        {2.5, 0.999593047982555, 0.0004069520174449589},
        {3.0, 0.9999779095030014, 2.2090496998585438e-05},
        {4.5, 0.9999999998033839, 1.9661604415428873e-10},
        {6.0, 1.0, 2.1519736712498916e-17},
        {-0.7, -0.6778011938374184, 1.6778011938374184},
        {-2.2, -0.9981371537020182, 1.998137153702018},
    };

    @Test
    void matchesKnownValuesToNearDoublePrecision() {
        for (double[] k : KNOWN) {
            assertClose(k[1], Erf.erf(k[0]), 1e-14, "erf(" + k[0] + ")");
            assertClose(k[2], Erf.erfc(k[0]), 1e-13, "erfc(" + k[0] + ")");
        }
    }

    @Test
    void matchesHighPrecisionSeriesAcrossTheRange() {
        for (double x = -5.0; x <= 5.0; x += 0.0625) {
            double expected = erfBig(x);
            assertEquals(expected, Erf.erf(x), 2e-15, "erf(" + x + ")");
            if (x > 0) {
                double erfc = 1 - erfBigDecimal(x).doubleValue();
                // erfc by subtraction is only good in absolute terms; check relative where it is meaningful.
                if (x < 3) {
                    assertClose(erfc, Erf.erfc(x), 1e-12, "erfc(" + x + ")");
                }
            }
        }
    }

    @Test
    void oddAndComplementary() {
        for (double x = 0.01; x < 7; x *= 1.37) {
            assertEquals(-Erf.erf(x), Erf.erf(-x), 0.0);
            assertEquals(1.0, Erf.erf(x) + Erf.erfc(x), 2e-16);
            assertEquals(2.0, Erf.erfc(x) + Erf.erfc(-x), 4e-16);
        }
        assertEquals(1.0, Erf.erf(30), 0.0);
        assertEquals(0.0, Erf.erfc(30), 0.0);
        assertEquals(2.0, Erf.erfc(-30), 0.0);
        assertTrue(Double.isNaN(Erf.erf(Double.NaN)));
    }

    @Test
    void fastTableAgreesWithTheAccurateRoutine() {
        for (double x = -7; x <= 7; x += 1.0 / 1024 + 1e-7) {
            double accurate = Erf.erfc(x);
            double fast = Erf.TaylorTable.erfc(x);
            assertEquals(accurate, fast, 2e-14, "erfc(" + x + ") absolute");
            double relative = Math.abs(x) < 2 ? 1e-12 : 2e-8;
            assertClose(accurate, fast, relative, "erfc(" + x + ") relative");
        }
        assertTrue(Double.isNaN(Erf.TaylorTable.erfc(Double.NaN)));
    }

    @Test
    void geluIsTheExactErfForm() {
        double[][] known = {
            {-10.0, -7.619853024160593e-23},
            {-6.0, -5.919525870226207e-09},
            {-3.0, -0.004049694094890287},
            {-1.0, -0.15865525393145707},
            {-0.5, -0.15426876936299344},
            {0.0, 0.0},
            {0.5, 0.34573123063700656},
            {1.0, 0.8413447460685429},
            {3.0, 2.99595030590511},
            {6.0, 5.999999994080474},
        };
        for (double[] k : known) {
            float expected = (float) k[1];
            float actual = Erf.gelu((float) k[0]);
            assertEquals(expected, actual, Math.ulp(expected), "gelu(" + k[0] + ")");
        }
    }

    private static void assertClose(double expected, double actual, double relative, String what) {
        double tol = relative * Math.abs(expected) + Double.MIN_NORMAL;
        assertEquals(expected, actual, tol, what);
    }

    private static double erfBig(double x) {
        return erfBigDecimal(x).doubleValue();
    }

    /** The Maclaurin series in 60-digit decimal arithmetic: slow, but independent of the code under test. */
    private static BigDecimal erfBigDecimal(double xd) {
        MathContext mc = new MathContext(60);
        BigDecimal x = new BigDecimal(xd);
        BigDecimal x2 = x.multiply(x, mc);
        BigDecimal term = x; // x^(2n+1) / n! * (-1)^n
        BigDecimal sum = BigDecimal.ZERO;
        for (int n = 0; n < 400; n++) {
            BigDecimal contribution = term.divide(BigDecimal.valueOf(2L * n + 1), mc);
            sum = sum.add(contribution, mc);
            if (contribution.abs().compareTo(new BigDecimal("1e-40")) < 0 && n > 5) {
                break;
            }
            term = term.multiply(x2, mc).divide(BigDecimal.valueOf(n + 1), mc).negate();
        }
        BigDecimal twoOverSqrtPi = new BigDecimal("1.12837916709551257389615890312154517168810125865799771368817");
        return sum.multiply(twoOverSqrtPi, mc);
    }
}
