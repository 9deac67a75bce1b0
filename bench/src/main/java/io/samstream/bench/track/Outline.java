package io.samstream.bench.track;

import io.samstream.connectors.video.PatternPainter;
import java.util.Random;

/**
 * The outline of a solid shape in its own coordinates: {@code (u, v)} from its centre, before the shape is
 * rotated (a {@link SceneClip} rotates and moves it). {@link #extent} bounds it: every covered point lies
 * within that distance of the centre. Beyond the test pattern's four kinds ({@link Pattern}): ellipses,
 * stars, rings (annuli: a hole that shows the background) and irregular polygons.
 */
public sealed interface Outline {
    /** Whether the point {@code (u, v)} from the centre is inside. */
    boolean covers(double u, double v);

    /** The largest distance of a covered point from the centre, pixels. */
    double extent();

    /** A short name for reports ("star5", "ring", ...). */
    String label();

    /** One of the test pattern's kinds (disc, box, triangle, diamond) of half-width {@code radius}. */
    record Pattern(PatternPainter.Kind kind, double radius) implements Outline {
        @Override
        public boolean covers(double u, double v) {
            return kind.covers(radius, u, v);
        }

        @Override
        public double extent() {
            return radius * Math.sqrt(2);
        }

        @Override
        public String label() {
            return kind.name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** An ellipse with half-axes {@code a} (along u) and {@code b} (along v). */
    record Ellipse(double a, double b) implements Outline {
        @Override
        public boolean covers(double u, double v) {
            return (u * u) / (a * a) + (v * v) / (b * b) <= 1;
        }

        @Override
        public double extent() {
            return Math.max(a, b);
        }

        @Override
        public String label() {
            return "ellipse";
        }
    }

    /** A star of {@code points} tips at {@code outer}, its notches at {@code inner}; a tip points up (-v). */
    record Star(int points, double outer, double inner) implements Outline {
        public Star {
            if (points < 3 || !(inner > 0 && inner < outer)) {
                throw new IllegalArgumentException("a star needs 3+ points and 0 < inner < outer");
            }
        }

        @Override
        public boolean covers(double u, double v) {
            double r = Math.hypot(u, v);
            if (r > outer) {
                return false;
            }
            if (r <= inner) {
                return true;
            }
            // The boundary between a tip (angle 0 of the sector) and a notch (angle pi / points) is straight.
            double sector = Math.PI / points;
            double a = Math.atan2(u, -v); // 0 at the top tip
            double phi = Math.abs(Math.IEEEremainder(a, 2 * sector)); // 0 .. sector
            // The edge from the tip (outer, 0) to the notch (inner, sector), in polar form.
            double tx = outer;
            double ty = 0;
            double nx = inner * Math.cos(sector);
            double ny = inner * Math.sin(sector);
            double px = r * Math.cos(phi);
            double py = r * Math.sin(phi);
            // Inside when on the centre's side of the edge.
            double cross = (nx - tx) * (py - ty) - (ny - ty) * (px - tx);
            double crossCentre = (nx - tx) * (0 - ty) - (ny - ty) * (0 - tx);
            return Math.signum(cross) == Math.signum(crossCentre) || cross == 0;
        }

        @Override
        public double extent() {
            return outer;
        }

        @Override
        public String label() {
            return "star" + points;
        }
    }

    /** An annulus: inside {@code outer}, outside {@code inner} (the hole shows what lies behind). */
    record Ring(double outer, double inner) implements Outline {
        public Ring {
            if (!(inner > 0 && inner < outer)) {
                throw new IllegalArgumentException("a ring needs 0 < inner < outer");
            }
        }

        @Override
        public boolean covers(double u, double v) {
            double r2 = u * u + v * v;
            return r2 <= outer * outer && r2 > inner * inner;
        }

        @Override
        public double extent() {
            return outer;
        }

        @Override
        public String label() {
            return "ring";
        }
    }

    /** A simple polygon (vertices in order around the centre); even-odd rule. */
    record Polygon(double[] us, double[] vs) implements Outline {
        public Polygon {
            if (us.length < 3 || us.length != vs.length) {
                throw new IllegalArgumentException("a polygon needs 3+ vertices");
            }
            us = us.clone();
            vs = vs.clone();
        }

        /**
         * An irregular star-shaped polygon: {@code n} vertices at evenly spread angles, each jittered by up to
         * half a step, at radii drawn from {@code [radius (1 - jitter), radius]}.
         */
        public static Polygon irregular(Random random, int n, double radius, double jitter) {
            double[] us = new double[n];
            double[] vs = new double[n];
            double step = 2 * Math.PI / n;
            for (int i = 0; i < n; i++) {
                double a = i * step + (random.nextDouble() - 0.5) * step * 0.5;
                double r = radius * (1 - jitter * random.nextDouble());
                us[i] = r * Math.cos(a);
                vs[i] = r * Math.sin(a);
            }
            return new Polygon(us, vs);
        }

        @Override
        public boolean covers(double u, double v) {
            boolean inside = false;
            for (int i = 0, j = us.length - 1; i < us.length; j = i++) {
                if ((vs[i] > v) != (vs[j] > v) && u < (us[j] - us[i]) * (v - vs[i]) / (vs[j] - vs[i]) + us[i]) {
                    inside = !inside;
                }
            }
            return inside;
        }

        @Override
        public double extent() {
            double e = 0;
            for (int i = 0; i < us.length; i++) {
                e = Math.max(e, Math.hypot(us[i], vs[i]));
            }
            return e;
        }

        @Override
        public String label() {
            return "polygon" + us.length;
        }
    }
}
